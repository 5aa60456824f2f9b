"""Graph API error codes → the send taxonomy, with the operator's fix for each."""

from __future__ import annotations

import pytest

from chatgate.channels.whatsapp import errors
from chatgate.channels.whatsapp.errors import classify_graph
from chatgate.channels.whatsapp.graph import GraphError
from chatgate.model.reasons import SendErrorKind as K

CASES = [
    (400, 130429, K.RATE_LIMITED, 1.0),
    (400, 131048, K.RATE_LIMITED, 60.0),
    (400, 131056, K.RATE_LIMITED, 6.0),
    (400, 4, K.RATE_LIMITED, 60.0),
    (429, None, K.RATE_LIMITED, 1.0),
    (400, 131047, K.OUTSIDE_WINDOW, None),
    (401, 190, K.AUTH_FATAL, None),
    (403, 10, K.AUTH_FATAL, None),
    (403, 200, K.AUTH_FATAL, None),
    (400, 368, K.AUTH_FATAL, None),
    (400, 131026, K.TARGET_NOT_FOUND, None),
    (400, 131030, K.FORBIDDEN, None),
    (500, 131000, K.TRANSIENT, None),
    (503, None, K.TRANSIENT, None),
    (400, 100, K.INVALID_REQUEST, None),
    (400, 132001, K.INVALID_REQUEST, None),
]


@pytest.mark.parametrize(
    ("status", "code", "kind", "wait"), CASES, ids=[str(c[1] or c[0]) for c in CASES]
)
def test_classify(status: int, code: int | None, kind: K, wait: float | None) -> None:
    result = classify_graph(status, code, "words")
    assert (result.kind, result.retry_after_s) == (kind, wait)


def test_hints_name_the_fix() -> None:
    assert "generate a new system-user token" in errors.hint(190, K.AUTH_FATAL)
    assert "whatsapp_business_messaging" in errors.hint(10, K.AUTH_FATAL)
    assert "templates.outside_window" in errors.hint(131047, K.OUTSIDE_WINDOW)
    assert "recipient list" in errors.hint(131030, K.FORBIDDEN)
    assert "Message templates" in errors.hint(132001, K.INVALID_REQUEST)


def test_start_errors_park_only_what_a_restart_cannot_fix() -> None:
    expired = errors.start_error(GraphError(401, 190, "Session has expired"), "1")
    assert expired.fatal and expired.kind is K.AUTH_FATAL and "system-user token" in expired.hint
    unknown = errors.start_error(GraphError(400, 100, "Unsupported get request"), "42")
    assert unknown.fatal and "phone number id 42" in str(unknown)
    network = errors.start_error(ConnectionResetError(), "1")
    assert not network.fatal and network.kind is K.TRANSIENT


@pytest.mark.parametrize(
    ("api_base", "named"),
    [
        (None, "graph.facebook.com (443/tcp)"),
        ("https://graph.facebook.com", "graph.facebook.com (443/tcp"),
        ("https://relay.internal:8443/graph", "relay.internal (8443/tcp"),
        ("http://127.0.0.1:9000", "127.0.0.1 (9000/tcp"),
        ("http://wa-relay", "wa-relay (80/tcp"),
    ],
)
def test_the_network_hint_names_the_configured_graph_host(api_base: str | None, named: str) -> None:
    assert f"check network access to {named}" in errors.network_hint(api_base)
    assert errors.hint(None, K.TRANSIENT, api_base) == errors.network_hint(api_base)


def test_a_start_that_cannot_reach_a_relay_names_the_relay() -> None:
    error = errors.start_error(ConnectionRefusedError(), "1065", "https://relay.internal")
    assert "relay.internal" in (error.hint or "") and "graph.facebook.com" not in (error.hint or "")
