from __future__ import annotations

import pytest

from tests.fakes.teams import FakeTeams


@pytest.fixture
async def fake_teams() -> FakeTeams:  # type: ignore[misc]
    async with FakeTeams() as fake:
        yield fake
