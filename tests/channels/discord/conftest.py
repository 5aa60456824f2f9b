"""Fixtures for the Discord tests: a fake Discord with one guild and channel 4000 in it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.discord_lite import FakeDiscord


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        fake.add_guild(5000, 4000, 4001)
        yield fake
