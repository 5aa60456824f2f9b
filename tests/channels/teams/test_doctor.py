"""`chatgate doctor` for Teams against the fake cloud: token, signing keys, the public
endpoint, tenant settings; a wrong password is a failure with its fix and never shown."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.teams import errors
from chatgate.channels.teams.config import TeamsChannelConfig
from chatgate.channels.teams.doctor import check
from chatgate.config.findings import Level
from tests.channels.teams.support import endpoint, teams_config
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import APP_ID, APP_PASSWORD, TENANT, FakeTeams
from tests.harness import running


def section(ms: FakeTeams, **extra: object) -> TeamsChannelConfig:
    return TeamsChannelConfig.model_validate(
        {
            "app_id": APP_ID,
            "app_password": APP_PASSWORD,
            "endpoints": {"login_endpoint": ms.base, "openid_metadata_url": ms.metadata_url},
            **extra,
        }
    )


async def test_a_working_bot_passes_every_check(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        public = endpoint(gw).replace("http://", "https://")  # as the proxy would see it
        config = section(ms, tenant_id=TENANT)
        findings = await check(
            "teams", config.model_copy(update={"public_url": endpoint(gw)}), False
        )
    assert public.startswith("https://")
    levels = {f.check: f.level for f in findings}
    assert levels == {
        "teams.tenant": Level.OK,
        "teams.token": Level.OK,
        "teams.keys": Level.OK,
        "teams.endpoint": Level.OK,
    }
    assert ms.token_requests[-1]["tenant"] == TENANT  # single-tenant: its own login endpoint


async def test_a_wrong_password_fails_with_the_fix(fake_teams: FakeTeams) -> None:
    ms = fake_teams
    wrong = "wrong-secret-0123456789"
    findings = await check("teams", section(ms, app_password=wrong), False)
    token = next(f for f in findings if f.check == "teams.token")
    assert token.level is Level.FAIL and token.fix == errors.PASSWORD_HINT
    assert wrong not in str(findings)
    endpoint_finding = next(f for f in findings if f.check == "teams.endpoint")
    assert endpoint_finding.level is Level.SKIP


async def test_offline_and_unconfigured(fake_teams: FakeTeams) -> None:
    offline = await check("teams", section(fake_teams), True)
    assert [f.level for f in offline] == [Level.OK, Level.SKIP]
    bare = await check("teams", TeamsChannelConfig.model_validate({}), False)
    assert [f.level for f in bare] == [Level.WARN]
    odd = section(
        fake_teams, tenant_id=TENANT, allowed_tenants=["0b0b0b0b-0000-4000-8000-0000000000bb"]
    )
    tenant = (await check("teams", odd, True))[0]
    assert tenant.level is Level.WARN
