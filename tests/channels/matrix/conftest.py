"""One real Synapse per test session (per xdist worker), and people on it."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.channels.matrix.support import Person
from tests.requires import missing
from tests.support.synapse import MatrixUser, Synapse


@pytest.fixture(scope="session")
def synapse() -> Iterator[Synapse]:
    # find_spec, not import: importing synapse in the test process flips Pillow's global
    # LOAD_TRUNCATED_IMAGES, which made truncated-image tests on the same worker pass a half-read.
    if importlib.util.find_spec("synapse") is None:
        missing("matrix-synapse", "pip install matrix-synapse")
    server = Synapse.launch()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def bot(synapse: Synapse) -> MatrixUser:
    return await synapse.register("bot")


@pytest.fixture
async def alice(synapse: Synapse) -> AsyncIterator[Person]:
    person = await Person(synapse, await synapse.register("alice")).start()
    yield person
    await person.stop()


@pytest.fixture
async def bob(synapse: Synapse) -> AsyncIterator[Person]:
    person = await Person(synapse, await synapse.register("bob")).start()
    yield person
    await person.stop()


@pytest.fixture
async def carol(synapse: Synapse) -> AsyncIterator[Person]:
    """A person whose client encrypts (python-olm), for the E2EE tests."""
    pytest.importorskip("olm")
    person = await Person(synapse, await synapse.register("carol")).start(e2ee=True)
    yield person
    await person.stop()
