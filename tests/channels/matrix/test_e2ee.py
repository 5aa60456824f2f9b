"""An encrypted DM on a real Synapse: both sides encrypted on the wire, the model sees the
plaintext, and what chatgate stores holds no key material."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

from tests.channels.matrix.support import Person, matrix_config
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.support.synapse import MatrixUser, Synapse


def _stored_text(state: Path) -> str:
    """Everything chatgate keeps outside its crypto store, as text."""
    out = []
    for path in state.rglob("*"):
        if not path.is_file() or "crypto" in path.parts:
            continue
        if path.suffix in (".db", ".sqlite", ".sqlite3"):
            with sqlite3.connect(path) as db:
                tables = [
                    r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                ]
                for table in tables:
                    out.extend(str(row) for row in db.execute(f'SELECT * FROM "{table}"'))
        else:
            out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


async def test_an_encrypted_dm_is_answered_encrypted(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, carol: Person, fake_llm: FakeLLM
) -> None:
    channel = f'    dm_policy: allowlist\n    allowed_users: ["{carol.user_id}"]\n    e2ee: true'
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=channel)
    async with running(config):
        room = await carol.dm(bot.user_id, encrypted=True)
        await carol.wait_joined(room, bot.user_id)
        await carol.send(room, "a secret question")
        [answer] = await carol.answers(bot.user_id, room, timeout=40)
    assert answer.get("was_encrypted") is True  # it reached carol as m.room.encrypted
    assert answer["content"]["body"] == "echo: a secret question"
    assert fake_llm.requests[0].last_user_text == "a secret question"
    raw = [
        e for e in carol.events if e.get("room_id") == room and e.get("type") == "m.room.message"
    ]
    assert all(e.get("was_encrypted") for e in raw)  # nothing in the clear on either side
    stored = _stored_text(tmp_path / "state")
    assert "a secret question" in stored  # the transcript holds the plaintext ...
    account = carol.crypto.account
    for secret in (str(account.identity_key), str(account.signing_key)):
        assert secret not in stored  # ... and no key material
    assert "session_key" not in stored and "megolm" not in stored.lower()


async def test_an_encrypted_image_reaches_the_model_decrypted(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, carol: Person, fake_llm: FakeLLM
) -> None:
    from mautrix.crypto.attachments import encrypt_attachment

    from tests.media.samples import png

    image = png()
    channel = f'    dm_policy: allowlist\n    allowed_users: ["{carol.user_id}"]\n    e2ee: true'
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=channel)
    text = config.read_text().replace(
        "    timeout_s: 10\n", "    timeout_s: 10\n    media:\n      vision: true\n", 1
    )
    config.write_text(text)
    async with running(config):
        room = await carol.dm(bot.user_id, encrypted=True)
        await carol.wait_joined(room, bot.user_id)
        cipher, file = encrypt_attachment(image)
        mxc = await carol.client.upload_media(cipher, mime_type="application/octet-stream")
        encrypted = {**file.serialize(), "url": str(mxc)}
        content = {
            "msgtype": "m.image",
            "body": "red.png",
            "file": encrypted,
            "info": {"mimetype": "image/png", "size": len(image)},
        }
        await carol.send_raw(room, "m.room.message", content)
        await carol.answers(bot.user_id, room, timeout=40)
    parts = fake_llm.requests[0].messages[-1]["content"]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(image).decode()]
    assert encrypted["key"]["k"] not in _stored_text(tmp_path / "state")
