"""Slack Web API failures → SendErrorKind, with the hint an operator sees (table-driven)."""

from __future__ import annotations

import pytest

from chatgate.channels.slack.errors import classify_api, hint_for
from chatgate.model.reasons import SendErrorKind as K


@pytest.mark.parametrize(
    ("status", "error", "retry_after", "kind", "wait"),
    [
        (429, "ratelimited", "7", K.RATE_LIMITED, 7.0),
        (429, "", None, K.RATE_LIMITED, 1.0),
        (200, "ratelimited", "nonsense", K.RATE_LIMITED, 1.0),
        (200, "invalid_auth", None, K.AUTH_FATAL, None),
        (200, "account_inactive", None, K.AUTH_FATAL, None),
        (200, "token_revoked", None, K.AUTH_FATAL, None),
        (200, "channel_not_found", None, K.TARGET_NOT_FOUND, None),
        (200, "not_in_channel", None, K.FORBIDDEN, None),
        (200, "is_archived", None, K.FORBIDDEN, None),
        (200, "missing_scope", None, K.FORBIDDEN, None),
        (500, "fatal_error", None, K.TRANSIENT, None),
        (503, "", None, K.TRANSIENT, None),
        (200, "internal_error", None, K.TRANSIENT, None),
        (200, "invalid_blocks", None, K.INVALID_REQUEST, None),
        (200, "msg_too_long", None, K.INVALID_REQUEST, None),
    ],
)
def test_classify(
    status: int, error: str, retry_after: str | None, kind: K, wait: float | None
) -> None:
    result = classify_api(status, error, retry_after)
    assert (result.ok, result.kind, result.retry_after_s) == (False, kind, wait)


@pytest.mark.parametrize(
    ("error", "words"),
    [
        ("not_in_channel", "/invite"),
        ("is_archived", "archived"),
        ("token_revoked", "reinstall"),
        ("missing_scope", "OAuth & Permissions"),
        ("fatal_error", "network"),
    ],
)
def test_every_failure_names_its_fix(error: str, words: str) -> None:
    assert words in hint_for(classify_api(200, error))
