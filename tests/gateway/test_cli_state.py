"""CLI commands over the state database: dlq, pairing, why, sessions, --version."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate import __version__
from chatgate.cli.main import main
from chatgate.clock import SystemClock
from chatgate.model.chat import ChatMessage
from chatgate.model.messages import InboundMessage, Target
from chatgate.state.factory import build_state
from chatgate.state.records import JournalMark, JournalState
from tests.harness import load, write_config


@pytest.fixture
async def seeded(tmp_path: Path) -> Path:
    """State written through the store protocols while no daemon runs (the CLI's offline path)."""
    config = write_config(tmp_path, "channels:\n  webhook: {routes: {}}\n")
    loaded = load(config)
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    await state.dead_letters.add(
        Target("telegram", "42"),
        {"blocks": [{"type": "text", "text": "the lost answer"}]},
        "forbidden",
        "bot was blocked by the user",
        1,
        1000.0,
        inbound_key="telegram:9",
    )
    issued = await state.pairing.request("telegram", "77", "Zed", "77", 2e9)
    dropped = InboundMessage("telegram", "telegram", "-5", "group", "8", "55", "chatter")
    await state.journal.record(dropped, 1000.0, 60)
    await state.journal.settle(
        dropped.key,
        JournalMark(JournalState.DROPPED, 1001.0, stage="admission", reason="group_mention_only"),
    )
    grouped = InboundMessage("telegram", "telegram", "-100123", "group", "8", "-100123:56", "hi")
    await state.journal.record(grouped, 1000.0, 60)
    await state.journal.settle(
        grouped.key,
        JournalMark(JournalState.DROPPED, 1001.0, stage="admission", reason="group_mention_only"),
    )
    await state.sessions.append(
        "default:telegram:42", 0, [ChatMessage("user", "hello", "Ann")], 1000.0
    )
    await state.close()
    (tmp_path / "code").write_text(issued.code or "")
    return config


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"chatgate {__version__}"


def test_dlq_list_and_drop(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "dlq", "list", "--config", str(seeded))
    assert code == 0
    assert "telegram:42" in out and "forbidden" in out and "the lost answer" in out
    assert run(capsys, "dlq", "drop", "1", "--config", str(seeded))[0] == 0
    assert "empty" in run(capsys, "dlq", "list", "--config", str(seeded))[1]
    code, _, err = run(capsys, "dlq", "drop", "1", "--config", str(seeded))
    assert code == 64 and "no DLQ entry #1" in err


def test_pairing_list_approve_and_wrong_code(
    seeded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code_text = (seeded.parent / "code").read_text()
    _, out, _ = run(capsys, "pairing", "list", "--config", str(seeded))
    assert code_text in out and "Zed" in out
    code, _, err = run(
        capsys, "pairing", "approve", "telegram", "WRONG234", "--config", str(seeded)
    )
    assert code == 64 and "no pending code" in err
    code, out, _ = run(
        capsys, "pairing", "approve", "telegram", code_text.lower(), "--config", str(seeded)
    )
    assert code == 0 and "approved telegram user 77" in out
    _, out, _ = run(capsys, "pairing", "list", "--config", str(seeded))
    assert "approved:\n  telegram   77 'Zed'" in out


def test_why_explains_a_dropped_message(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "why", "telegram", "55", "--config", str(seeded))
    assert code == 0 and "dropped at admission: group_mention_only" in out
    code, out, _ = run(capsys, "why", "telegram", "--user", "8", "--config", str(seeded))
    assert "telegram:55" in out
    assert run(capsys, "why", "telegram", "404", "--config", str(seeded))[0] == 1


@pytest.mark.parametrize(
    "args",
    [
        ("why", "telegram", "-100123:56", "--config"),
        ("why", "--json", "telegram", "-100123:56", "--config"),
        ("why", "telegram", "-100123:56", "--json", "--config"),
    ],
)
def test_why_takes_a_group_message_id_that_starts_with_a_minus(
    seeded: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, *args, str(seeded))
    assert code == 0, err
    assert "group_mention_only" in out and "-100123:56" in out


def test_a_negative_user_id_after_user_stays_its_value() -> None:
    from chatgate.cli.main import _negative_ids

    assert _negative_ids(["why", "telegram", "--user", "-5"]) == ["why", "telegram", "--user", "-5"]
    assert _negative_ids(["jobs", "-1"]) == ["jobs", "-1"]
    assert _negative_ids(["why", "telegram", "-5:1", "--json"]) == [
        "why", "--json", "--", "telegram", "-5:1"
    ]  # fmt: skip


def test_sessions_list_show_and_reset(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "sessions", "list", "--config", str(seeded))
    assert "default:telegram:42" in out and "messages=1" in out
    _, out, _ = run(capsys, "sessions", "show", "default:telegram:42", "--config", str(seeded))
    assert "user (Ann): hello" in out
    code, out, _ = run(capsys, "sessions", "reset", "default:telegram:42", "--config", str(seeded))
    assert code == 0 and "epoch 1" in out
    _, out, _ = run(capsys, "sessions", "show", "default:telegram:42", "--config", str(seeded))
    assert "hello" not in out
    code, _, err = run(capsys, "sessions", "show", "nope", "--config", str(seeded))
    assert code == 64 and "no session 'nope'" in err
