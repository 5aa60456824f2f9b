"""`doctor` and `status` for Matrix against the real Synapse: whoami, versions, media limit,
E2EE keys and cross-signing; a device that is not the token's is named with the fix."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.channels.matrix.doctor import check
from chatgate.config.findings import Level
from tests.channels.matrix.support import matrix_config
from tests.fakes.llm import FakeLLM
from tests.harness import channel_status, running
from tests.support.synapse import MatrixUser, Synapse


def _config(synapse: Synapse, bot: MatrixUser, **more: object) -> MatrixChannelConfig:
    values = {
        "homeserver": synapse.base_url,
        "user_id": bot.user_id,
        "access_token": bot.access_token,
        "device_id": bot.device_id,
        **more,
    }
    return MatrixChannelConfig.model_validate(values)


async def test_doctor_reports_identity_server_media_and_keys(
    synapse: Synapse, bot: MatrixUser
) -> None:
    findings = {f.check: f for f in await check("matrix", _config(synapse, bot, e2ee=True), False)}
    assert findings["matrix.token"].level is Level.OK
    assert bot.user_id in findings["matrix.token"].detail
    assert findings["matrix.server"].level is Level.OK
    assert "20 MiB" in findings["matrix.media"].detail
    assert findings["matrix.e2ee"].level is Level.OK
    assert findings["matrix.keys"].level is Level.WARN  # not uploaded until the channel runs
    assert findings["matrix.cross_signing"].level is Level.WARN
    assert bot.access_token not in str(findings)


async def test_doctor_names_a_device_mismatch_with_the_fix(
    synapse: Synapse, bot: MatrixUser
) -> None:
    [finding, *_] = await check("matrix", _config(synapse, bot, device_id="OTHER"), False)
    assert finding.level is Level.FAIL
    assert f"device_id: {bot.device_id}" in (finding.fix or "")


async def test_status_shows_rooms_e2ee_and_no_secret(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, fake_llm: FakeLLM
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel="    e2ee: true")
    async with running(config) as gw:
        status = channel_status(gw, "matrix")
    assert status["e2ee"] == "on" and status["rooms_joined"] == 0
    assert bot.access_token not in str(status)


async def test_doctor_finds_the_keys_once_the_channel_uploaded_them(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, fake_llm: FakeLLM
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel="    e2ee: true")
    async with running(config) as gw:
        device = gw.channels.adapters["matrix"].crypto.machine.account.signing_key  # type: ignore[attr-defined]
    findings = {f.check: f for f in await check("matrix", _config(synapse, bot, e2ee=True), False)}
    keys = findings["matrix.keys"]
    assert keys.level is Level.OK
    assert keys.detail.startswith("device keys uploaded (ed25519 ")
    assert keys.detail.replace(" ", "").endswith(f"{device})")
    assert findings["matrix.cross_signing"].level is Level.WARN
