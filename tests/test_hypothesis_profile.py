"""The suite's hypothesis profile: reproducible examples unless HYPOTHESIS_PROFILE asks for more."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings


@pytest.mark.skipif("HYPOTHESIS_PROFILE" in os.environ, reason="another profile was asked for")
def test_default_profile_is_derandomized_without_a_database() -> None:
    assert settings.default.derandomize is True
    assert settings.default.database is None
    assert settings.default.print_blob is True


def test_explore_profile_draws_fresh_examples() -> None:
    assert settings.get_profile("explore").derandomize is False
