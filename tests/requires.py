"""Tests that need something of the machine: fail under CI (which must provide it), skip elsewhere.

The skip reason is shown with ``pytest -rs``; CI sets ``CI=true`` (.ci/run).
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(what: str, how: str) -> NoReturn:
    """Stop the test: ``what`` is not available here; ``how`` says how to get it."""
    why = f"{what} ({how})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}; CI must provide it")
    pytest.skip(reason=f"not available here: {why}")
