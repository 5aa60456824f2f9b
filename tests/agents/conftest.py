"""Fixtures for agent tests: a FakeLLM per test on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.fakes.llm import FakeLLM


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as server:
        yield server
