"""Masking secrets out of any text the gateway shows: logs, status, errors, doctor, config show.

Matching is case-insensitive (an SDK may lower-case an error that quotes a request path) and
covers the URL-quoted form of each secret. Telegram and Slack tokens are masked by their shape
even when not configured here (a proxy or an SDK error may echo another bot's token).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

REDACTED = "**********"
MIN_SECRET_LENGTH = 4
TELEGRAM_TOKEN_SHAPE = r"\d{6,}:[A-Za-z0-9_-]{30,}"
SLACK_TOKEN_SHAPE = r"\bxox[abpersc]-[A-Za-z0-9-]{8,}|\bxapp-[A-Za-z0-9-]{8,}"


class Masker:
    """Replaces every known secret, and anything shaped like a bot token, with REDACTED."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if len(secret) < MIN_SECRET_LENGTH:
                continue
            forms.update({secret, quote(secret, safe=""), quote_plus(secret, safe="")})
        # Longest first, so a secret that contains another is replaced whole.
        alternatives = [re.escape(form) for form in sorted(forms, key=len, reverse=True)]
        alternatives += [TELEGRAM_TOKEN_SHAPE, SLACK_TOKEN_SHAPE]
        self._pattern = re.compile("|".join(alternatives), re.IGNORECASE)
        self.secrets = frozenset(forms)

    def mask(self, text: str) -> str:
        return self._pattern.sub(REDACTED, text)


@functools.lru_cache(maxsize=8)
def masker_for(secrets: frozenset[str]) -> Masker:
    """A cached Masker (status and the API build one per answer otherwise)."""
    return Masker(secrets)


def mask_text(text: str, secrets: Iterable[str]) -> str:
    return masker_for(frozenset(secrets)).mask(text)
