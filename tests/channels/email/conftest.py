"""One Dovecot for the whole session; a fresh mailbox and SMTP server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.channels.email.dovecot import Dovecot, start_dovecot
from tests.channels.email.servers import MailWorld, new_mailbox


@pytest.fixture(scope="session")
def dovecot() -> Iterator[Dovecot]:
    server = start_dovecot()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def world(dovecot: Dovecot) -> Iterator[MailWorld]:
    w = MailWorld(new_mailbox(dovecot)).start()
    try:
        yield w
    finally:
        w.stop()


@pytest.fixture
def own_world() -> Iterator[MailWorld]:
    """A world on a Dovecot of its own, for a test whose logins are refused: on the shared
    server their after-effects stall the next tests' logins."""
    server = start_dovecot()
    w = MailWorld(new_mailbox(server)).start()
    try:
        yield w
    finally:
        w.stop()
        server.stop()
