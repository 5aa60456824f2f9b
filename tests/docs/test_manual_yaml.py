"""Every YAML block in the manual (README.md, docs/) is a config `chatgate config check` accepts
(blocks fenced as ```yaml manifest are Slack app manifests, checked in
tests/channels/slack/test_manifest.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chatgate.cli.main import main
from tests.docs.manual import ROOT, pages

BLOCKS = [
    (f"{page.relative_to(ROOT)}#{i}", block)
    for page in pages()
    for i, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", page.read_text("utf-8"), re.S))
]
ENV = {
    "CHATGATE_API_TOKEN": "Zq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A",
    "CHATGATE_WEBCHAT_TOKEN": "Wc8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0B",
    "OPENAI_API_KEY": "sk-readme-example",
    "AGENT_TOKEN": "agent-readme-example",
    "GITHUB_WEBHOOK_SECRET": "whsec-readme-example",
    "GITHUB_TOKEN": "ghp-readme-example",
    "DISCORD_BOT_TOKEN": "discord-readme-example",
    "TELEGRAM_BOT_TOKEN": "123456:" + "A" * 35,
    "REDIS_URL": "redis://:readme-example@127.0.0.1:6379/0",
    "POD_NAME": "chatgate-0",
    "SLACK_BOT_TOKEN": "xoxb-1-readme-example",
    "SLACK_APP_TOKEN": "xapp-1-readme-example",
    "SLACK_SIGNING_SECRET": "slack-readme-example",
}


def test_the_manual_has_yaml_blocks() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("block", [b for _, b in BLOCKS], ids=[name for name, _ in BLOCKS])
def test_manual_yaml_block_passes_config_check(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "gateway.yaml"
    path.write_text(block, encoding="utf-8")
    try:
        code = main(["config", "check", "--config", str(path)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
