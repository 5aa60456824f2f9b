"""Distinctive canary secrets, every failure path we can drive, then a scan of every output.

A real `chatgate run` subprocess at debug log level with the fake Bot API, the fake Slack (Events
API: an answer, a forged signature, a token revoked at runtime) and the fake model: bad
model key (401), model 500, a send failure into the DLQ, a crashing python agent, a bad webhook
signature, a reload with a broken config, config errors, then logs, `status --json`,
`/api/status`, `/metrics`, `config show`, `doctor`, the state directory's files and every
reply are searched for each canary (also lower-cased): zero hits.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import aiohttp
import pytest

from chatgate.channels.signatures import sign
from tests.channels.telegram.support import api_base
from tests.daemon import ROOT, Daemon, run_cli
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram, FaultSpec
from tests.fakes.whatsapp import PHONE_NUMBER_ID, FakeWhatsApp
from tests.harness import write_config

pytestmark = pytest.mark.slow

BOT_TOKEN = "918273645:CANARYbotTokenQwErTy0123456789abcdXYZ"
MODEL_KEY = "sk-CANARY-model-key-7f3e9a1c5b"
HOOK_SECRET = "whsec-CANARY-hook-4d2b8e6f0a"
API_TOKEN = "CANARY-api-token-9c8b7a6f5e4d3c2b1a0z"
SLACK_BOT = "xoxb-1-CANARY-slack-bot-3e8d1f"
SLACK_APP = "xapp-1-CANARY-slack-app-6b2c9a"
SLACK_SIGNING = "CANARY-slack-signing-0d7e4c2a"
WA_TOKEN = "EAAG-CANARY-whatsapp-token-5e1d"
WA_SECRET = "CANARY-whatsapp-app-secret-8c3f"
WA_VERIFY = "CANARY-whatsapp-verify-2a9b"
CANARIES = (
    BOT_TOKEN,
    MODEL_KEY,
    HOOK_SECRET,
    API_TOKEN,
    SLACK_BOT,
    SLACK_APP,
    SLACK_SIGNING,
    WA_TOKEN,
    WA_SECRET,
    WA_VERIFY,
)
USER = 5550001


def config_text(
    tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, slack: FakeSlack, wa: FakeWhatsApp
) -> str:
    return f"""  api_token: ${{CHATGATE_API_TOKEN}}
  log: {{level: debug, format: json}}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {llm.base_url}
    api_key: ${{OPENAI_API_KEY}}
    timeout_s: 5
  crash: {{backend: python, function: "tests.security.agents:crash"}}
channels:
  telegram:
    token: ${{TELEGRAM_BOT_TOKEN}}
    api_base: {api_base(tg)}
    dm_policy: open
    poll_timeout_s: 1
    request_timeout_s: 5
  slack:
    bot_token: ${{SLACK_BOT_TOKEN}}
    app_token: ${{SLACK_APP_TOKEN}}
    signing_secret: ${{SLACK_SIGNING_SECRET}}
    mode: events
    api_base: {slack.api_url}
    dm_policy: open
  whatsapp:
    access_token: ${{WHATSAPP_TOKEN}}
    app_secret: ${{WHATSAPP_APP_SECRET}}
    verify_token: ${{WHATSAPP_VERIFY_TOKEN}}
    phone_number_id: "{PHONE_NUMBER_ID}"
    api_base: {wa.api_base}
    dm_policy: open
  webhook:
    routes:
      jobs:
        path: /hooks/jobs
        secret: ${{HOOK_SECRET}}
        prompt: "{{payload.text}}"
        agent: crash
schedules:
  yearly:
    cron: "0 3 1 1 *"
    prompt: "rotate ${{HOOK_SECRET}}"
    deliver: {{to: "telegram:{USER}"}}
"""


def found(text: str) -> list[str]:
    lowered = text.lower()
    return [c for c in CANARIES if c in text or c.lower() in lowered]


async def post(base: str, path: str, body: bytes, headers: dict[str, str]) -> str:
    async with (
        aiohttp.ClientSession() as session,
        session.post(base + path, data=body, headers=headers) as resp,
    ):
        return f"{resp.status} {await resp.text()}"


async def test_no_canary_anywhere(tmp_path: Path, fake_llm: FakeLLM) -> None:
    env = {
        "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
        "OPENAI_API_KEY": MODEL_KEY,
        "HOOK_SECRET": HOOK_SECRET,
        "CHATGATE_API_TOKEN": API_TOKEN,
        "SLACK_BOT_TOKEN": SLACK_BOT,
        "SLACK_APP_TOKEN": SLACK_APP,
        "SLACK_SIGNING_SECRET": SLACK_SIGNING,
        "WHATSAPP_TOKEN": WA_TOKEN,
        "WHATSAPP_APP_SECRET": WA_SECRET,
        "WHATSAPP_VERIFY_TOKEN": WA_VERIFY,
        "PYTHONPATH": str(ROOT),  # the crashing agent lives in tests/
    }
    auth = {"Authorization": f"Bearer {API_TOKEN}"}
    outputs: list[str] = []
    async with (
        FakeTelegram(token=BOT_TOKEN) as tg,
        FakeSlack(bot_tokens=(SLACK_BOT,), app_token=SLACK_APP) as slack,
        FakeWhatsApp(token=WA_TOKEN, app_secret=WA_SECRET) as wa,
    ):
        config = write_config(tmp_path, config_text(tmp_path, tg, fake_llm, slack, wa))
        good = config.read_text()
        fake_llm.script(Fault.unauthorized(), Fault.server_error(), "fine", "also fine")
        daemon = await Daemon(config, env=env).start()
        try:
            for i, text in enumerate(["one", "two", "three"]):
                tg.dm(USER, f"{text} {i}")
                await tg.wait_for("sendMessage", i + 1, timeout=20)
            # a photo whose download fails (Telegram file URLs carry the bot token)
            tg.files.add("canary-photo", b"\x89PNG\r\n\x1a\n", ext="png")
            tg.files.fail_downloads = 2
            photo = [{"file_id": "canary-photo", "file_unique_id": "c", "width": 9, "height": 9}]
            tg.media_message(USER, "photo", photo)
            [*_, notice] = await tg.wait_for("sendMessage", 4, timeout=20)
            outputs.append(str(notice.params))
            events = "/slack/events"
            hello = slack.message_event("slack hello", channel="D1")
            outputs.append(
                repr(
                    await slack.post_event(
                        daemon.base + events, hello, signing_secret=SLACK_SIGNING
                    )
                )
            )
            await slack.wait_posts(1, timeout=20)
            forged = slack.message_event("forged", channel="D1")
            outputs.append(
                repr(
                    await slack.post_event(
                        daemon.base + events,
                        forged,
                        signing_secret=SLACK_SIGNING,
                        bad_signature=True,
                    )
                )
            )
            slack.revoke_token(error="invalid_auth")  # the next reply parks the channel
            late = slack.message_event("after revoke", channel="D1")
            outputs.append(
                repr(
                    await slack.post_event(daemon.base + events, late, signing_secret=SLACK_SIGNING)
                )
            )
            await slack.wait_calls("chat.postMessage", 2, timeout=20)
            hook = daemon.base + "/whatsapp/webhook"
            outputs.append(repr(await wa.verify(hook, WA_VERIFY)))
            outputs.append(repr(await wa.verify(hook, WA_VERIFY[:-1])))
            outputs.append(repr(await wa.post(hook, wa.message("15550001", text="wa hello"))))
            await wa.wait_sent(1, timeout=20)
            forged_wa = wa.message("15550001", text="forged")
            outputs.append(repr(await wa.post(hook, forged_wa, secret=WA_SECRET[:-1])))
            wa.expire_token()  # the next call parks the channel
            outputs.append(repr(await wa.post(hook, wa.message("15550001", text="expired"))))
            await wa.wait_calls(lambda c: c.error == 190, timeout=20)
            tg.fail("sendMessage", FaultSpec(400, "Bad Request: chat not found"), times=10)
            tg.dm(USER, "four")
            body = json.dumps({"text": "crash please"}).encode()
            headers = {"Content-Type": "application/json", "X-Request-Id": "c1"}
            headers.update(sign("generic", HOOK_SECRET, body, time.time()))
            outputs.append(await post(daemon.base, "/hooks/jobs", body, headers))
            bad = {"X-Signature-256": "sha256=" + HOOK_SECRET}
            outputs.append(await post(daemon.base, "/hooks/jobs", body, bad))
            config.write_text(good + f"  oops: {{port: {MODEL_KEY}}}\n  http: {API_TOKEN}\n")
            outputs.append(await post(daemon.base, "/api/reload", b"", auth))
            config.write_text(good)
            json_auth = {**auth, "Content-Type": "application/json"}
            for text in (
                good + f"  oops: {{port: {MODEL_KEY}}}\n",  # invalid, the secret in the way
                good.replace("${CHATGATE_API_TOKEN}", API_TOKEN),  # a secret in clear
            ):
                body = json.dumps({"text": text}).encode()
                outputs.append(await post(daemon.base, "/api/config/check", body, json_auth))
            paths = (
                "/api/config",
                "/api/config/history",
                "/api/status",
                "/metrics",
                "/api/dlq",
                "/api/sessions",
                "/api/chats",
                "/api/jobs",
                "/healthz",
            )
            for path in paths:
                outputs.append(str(await daemon.get(path, headers=auth)))
            assert "rotate " in outputs[-2]  # the job's prompt is shown, its secret scrubbed
            for args in (
                ["status", "--json"],
                ["dlq", "list", "--json"],
                ["jobs", "list", "--json"],
                ["chats", "list", "--json"],
                ["config", "show"],
            ):
                code, out, err = await run_cli(*args, "--config", str(config), env=env)
                outputs += [out, err]
            code, out, err = await run_cli("doctor", "--config", str(config), env=env)
            outputs += [out, err]
        finally:
            await daemon.terminate()
        broken = tmp_path / "broken.yaml"
        broken.write_text(good.replace("level: debug", f"level: {MODEL_KEY}"))
        code, out, err = await run_cli("config", "check", "--config", str(broken), env=env)
        assert code == 78
        outputs += [out, err]
        outputs.append(repr([call.params for call in tg.calls_of("sendMessage")]))
        outputs.append(repr([call.params for call in slack.calls()]))
        outputs.append(repr([(call.path, call.body) for call in wa.calls]))
    outputs.append(daemon.logs())
    everything = "\n".join(outputs)
    assert "invalid signature" in everything  # the paths were driven
    assert "invalid request" in everything and "Slack rejected the bot token" in everything
    assert "verification failed" in everything and "system-user token" in everything
    assert "RuntimeError" in everything or "crash" in everything
    assert "config_invalid" in everything and "config_clear_secret" in everything
    assert found(everything) == [], [line for line in everything.splitlines() if found(line)]
    for file in (tmp_path / "state").rglob("*"):
        if file.is_file():
            data = file.read_bytes().decode("utf-8", errors="replace")
            assert found(data) == [], file
