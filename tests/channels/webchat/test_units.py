"""Web chat pieces without a gateway: cookie signing, the outbox, rendering, config checks."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from chatgate.channels.registry import ChannelRegistry
from chatgate.channels.webchat.config import WebChatChannelConfig
from chatgate.channels.webchat.identity import Signer, load_install_key, new_session_id
from chatgate.channels.webchat.outbox import Entry, Outbox
from chatgate.channels.webchat.render import render
from chatgate.config.claims import AgentRef, LoopbackOnly, PathClaim
from chatgate.config.errors import EX_CONFIG
from chatgate.model.outbound import (
    Button,
    Buttons,
    Image,
    OutboundMessage,
    Select,
    SelectOption,
    Table,
    Text,
)
from tests.config.support import STRONG_TOKEN, assert_issue, load, load_error

NOW = 1_700_000_000.0


def test_cookie_round_trips_and_rejects_tampering_expiry_and_other_keys(tmp_path: Path) -> None:
    key = load_install_key(tmp_path)
    signer = Signer.derive(key, "webchat", "token-one")
    sid = new_session_id()
    cookie = signer.issue(sid, NOW)
    assert signer.verify(cookie, NOW + 10, 3600) == sid
    assert signer.verify(cookie, NOW + 3601, 3600) is None  # expired
    assert signer.verify(cookie.replace(sid, new_session_id()), NOW, 3600) is None
    assert signer.verify(cookie[:-2] + "AA", NOW, 3600) is None
    assert signer.verify("garbage", NOW, 3600) is None
    # another channel, or a rotated token, signs everyone out
    assert Signer.derive(key, "webchat2", "token-one").verify(cookie, NOW, 3600) is None
    assert Signer.derive(key, "webchat", "token-two").verify(cookie, NOW, 3600) is None
    assert signer.check_csrf(sid, signer.csrf(sid))
    assert not signer.check_csrf(sid, "")
    assert not signer.check_csrf(new_session_id(), signer.csrf(sid))


def test_install_key_is_private_and_stable(tmp_path: Path) -> None:
    key = load_install_key(tmp_path / "state")
    assert load_install_key(tmp_path / "state") == key
    mode = stat.S_IMODE(os.stat(tmp_path / "state" / "webchat.key").st_mode)
    assert mode == 0o600


async def test_outbox_orders_changes_keeps_positions_and_survives_reopening(
    tmp_path: Path,
) -> None:
    published: list[Entry] = []
    path = tmp_path / "outbox.db"
    outbox = Outbox(path, keep=10, max_age_s=3600, publish=published.append)
    await outbox.open(NOW)
    user = await outbox.put("s1", "user", {"text": "hi"}, NOW, message_id="u-1")
    draft = await outbox.put("s1", "assistant", {"blocks": ["dra"]}, NOW)
    other = await outbox.put("s2", "assistant", {"blocks": ["x"]}, NOW)
    final = await outbox.put(
        "s1", "assistant", {"blocks": ["draft done"]}, NOW, message_id=draft.id
    )
    await asyncio.sleep(0)
    assert [e.seq for e in published] == [1, 2, 1, 3]  # per-session sequence numbers
    assert (final.id, final.pos, final.seq) == (draft.id, draft.pos, 3)
    assert other.seq == 1
    assert [e.id for e in await outbox.since("s1", 0)] == [user.id, draft.id]
    assert [e.body for e in await outbox.since("s1", 2)] == [{"blocks": ["draft done"]}]
    assert await outbox.since("s1", 3) == []
    await outbox.close()

    reopened = Outbox(path, keep=10, max_age_s=3600, publish=published.append)
    await reopened.open(NOW + 60)
    later = await reopened.put("s1", "assistant", {"blocks": ["after restart"]}, NOW + 60)
    assert later.seq == 4 and later.id == "m4"  # resumes, never reuses a sequence number
    assert len(await reopened.since("s1", 0)) == 3
    await reopened.close()

    expired = Outbox(path, keep=10, max_age_s=30, publish=published.append)
    await expired.open(NOW + 3600)
    assert await expired.since("s1", 0) == []
    await expired.close()


async def test_outbox_keeps_only_the_newest_messages(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "o.db", keep=10, max_age_s=3600, publish=lambda e: None)
    await outbox.open(NOW)
    for n in range(45):
        await outbox.put("s", "assistant", {"n": n}, NOW)
    kept = await outbox.since("s", 0)
    assert 10 <= len(kept) < 30
    assert kept[-1].body == {"n": 44}
    await outbox.close()


def test_render_keeps_widgets_structured_and_markdown_safe() -> None:
    message = OutboundMessage(
        (
            Text("**bold** <script>alert(1)</script>\n```python\nprint('x')\n```"),
            Buttons(
                (
                    Button("Yes", value="yes", style="primary"),
                    Button("Docs", url="https://example.com/docs"),
                    Button("Evil", url="javascript:alert(1)"),
                )
            ),
            Select((SelectOption("One", "1"),), placeholder="Pick"),
            Table(("a", "b"), (("1", "2"),)),
            Image("https://example.com/x.png", "a cat"),
        )
    )
    [rendered] = render(message)
    text, buttons, select, table, image = rendered.native["blocks"]
    assert "<b>bold</b>" in text["html"]
    assert "&lt;script&gt;" in text["html"] and "<script>" not in text["html"]
    assert "<pre><code class=\"language-python\">print('x')</code></pre>" in text["html"]
    assert [b["label"] for b in buttons["buttons"]] == ["Yes", "Docs"]
    assert buttons["buttons"][0] == {
        "label": "Yes",
        "value": "yes",
        "url": None,
        "style": "primary",
    }
    assert select == {
        "type": "select",
        "placeholder": "Pick",
        "options": [{"label": "One", "value": "1"}],
    }
    assert table == {"type": "table", "columns": ["a", "b"], "rows": [["1", "2"]]}
    assert image["type"] == "text" and "a cat: https://example.com/x.png" in image["html"]


def test_descriptor_claims_the_path_agents_and_loopback_and_hints_listed_agents() -> None:
    descriptor = ChannelRegistry(plugins=False).descriptor("webchat")
    section = WebChatChannelConfig.model_validate(
        {"auth": "open", "path": "/talk", "agents": ["ops"], "agent": "default"}
    )
    claims = set(descriptor.claims(section))
    assert PathClaim("/talk", ("path",), prefix=True) in claims
    assert AgentRef("ops", ("agents", 0)) in claims and AgentRef("default", ("agent",)) in claims
    assert any(isinstance(c, LoopbackOnly) and c.key == ("auth",) for c in claims)
    hints = descriptor.route_hints(section)
    assert set(hints) == {"agent:ops"}
    assert hints["agent:ops"].agent == "ops" and not hints["agent:ops"].trusted
    assert section.stream.enabled  # a browser streams by default


def test_open_auth_off_loopback_is_a_config_error(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        f"""
gateway:
  http: {{host: 0.0.0.0}}
  api_token: {STRONG_TOKEN}
channels:
  webchat:
    auth: open
""",
    )
    assert error.exit_code == EX_CONFIG
    assert_issue(
        error, "channels.webchat.auth", 6, "only allowed while gateway.http.host is loopback"
    )
    assert "it is 0.0.0.0); use auth: token" in error.render()


@pytest.mark.parametrize(
    ("body", "path", "line", "fragment"),
    [
        ("  webchat: {token: short}\n", "channels.webchat.token", 2, "too weak"),
        (
            "  webchat: {agents: [nobody]}\n",
            "channels.webchat.agents[0]",
            2,
            "unknown agent 'nobody'",
        ),
        ("  webchat: {path: /dashboard}\n", "channels.webchat.path", 2, "reserved by the gateway"),
        ("  webchat: {path: /api}\n", "channels.webchat.path", 2, "reserved by the gateway"),
    ],
)
def test_webchat_config_errors_name_the_key(
    tmp_path: Path, body: str, path: str, line: int, fragment: str
) -> None:
    assert_issue(load_error(tmp_path, "channels:\n" + body), path, line, fragment)


def test_open_auth_on_loopback_loads(tmp_path: Path) -> None:
    loaded = load(tmp_path, "channels:\n  webchat: {auth: open, dm_policy: open}\n")
    assert loaded.channels["webchat"].platform == "webchat"
