"""Suite-wide setup: no network egress, litellm offline, proxies cleared, hypothesis
derandomized unless HYPOTHESIS_PROFILE says otherwise."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

# litellm fetches a remote cost map at import unless told not to; SDKs honour proxy vars.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
for _var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    os.environ.pop(_var, None)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"


import pytest  # noqa: E402

if TYPE_CHECKING:
    from tests.support.spans import Spans
from hypothesis import settings  # noqa: E402

# `make test` runs the same examples every time (a red CI run is a real regression, not a new
# random draw); HYPOTHESIS_PROFILE=explore draws fresh examples and keeps failures in .hypothesis/.
settings.register_profile("deterministic", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

from tests.fakes.llm import FakeLLM  # noqa: E402


@pytest.fixture
async def fake_llm() -> FakeLLM:  # type: ignore[misc]
    async with FakeLLM() as fake:
        yield fake


from tests.fakes.telegram import FakeTelegram  # noqa: E402


@pytest.fixture
async def fake_tg() -> FakeTelegram:  # type: ignore[misc]
    async with FakeTelegram() as fake:
        yield fake


from tests.fakes.slack import FakeSlack  # noqa: E402


@pytest.fixture
async def fake_slack() -> FakeSlack:  # type: ignore[misc]
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _no_leftover_daemons() -> Iterator[None]:
    yield
    from tests.daemon import kill_leftovers

    kill_leftovers()


from tests.fakes.discord import FakeDiscord  # noqa: E402


@pytest.fixture
async def fake_discord() -> FakeDiscord:  # type: ignore[misc]
    """Fake Discord REST+gateway over HTTPS/WSS; give clients ``**fake_discord.client_kwargs()``."""
    async with FakeDiscord() as fake:
        yield fake


from tests.fakes.whatsapp import FakeWhatsApp  # noqa: E402


@pytest.fixture
async def fake_wa() -> FakeWhatsApp:  # type: ignore[misc]
    """Fake WhatsApp Cloud API (Graph API + Meta's webhook posts) on plain HTTP."""
    async with FakeWhatsApp() as fake:
        yield fake


@pytest.fixture
def spans() -> Iterator[Spans]:
    """Tracing on for the test (in-process gateways record every span in memory); imported
    here, not at the top, so a test that checks what a gateway imports sees no OTel SDK."""
    from tests.support.spans import Spans

    recorded = Spans()
    yield recorded
    recorded.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Heaviest test files first (see tests/support/heavy_first.py)."""
    from tests.support.heavy_first import file_costs, heaviest_first

    items[:] = heaviest_first(items, file_costs())


def pytest_sessionstart(session: pytest.Session) -> None:
    """Bytecode for chatgate before any daemon starts: each `chatgate run` a test spawns would
    otherwise compile the package from source (PYTHONDONTWRITEBYTECODE, an editable install).
    Once, in the controller; an up-to-date tree costs a stat per file."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall

    from tests.daemon import ROOT

    compileall.compile_dir(ROOT / "chatgate", quiet=1)
