"""The bench's Teams floor (a bare Teams SDK bot) refuses a forged token and answers a signed
activity through the SDK's conversation client."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.procs import AnnouncedProc, started
from bench.scenarios.teams import PATH, floor_argv
from tests.fakes.teams import FakeTeams


@pytest.mark.slow
async def test_teams_floor_verifies_and_answers(tmp_path: Path) -> None:
    async with FakeTeams() as fake:
        floor = AnnouncedProc("teams-floor", floor_argv(fake, "echo", None), tmp_path / "f.log")
        async with started(floor):
            url = f"http://127.0.0.1:{floor.port}{PATH}"
            forged = await fake.post(url, fake.message("x"), token=fake.token(forged=True))
            status, _ = await fake.post(url, fake.message("hello floor"))
            [sent] = await fake.wait_sent(1)
    assert forged[0] == 401 and status == 200
    assert sent.text == "hello floor" and sent.conversation == "a:1personal-chat"
