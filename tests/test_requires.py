"""A test missing something of the machine fails under CI and is skipped, with its reason, elsewhere."""

from __future__ import annotations

import pytest

from tests.requires import missing


@pytest.mark.parametrize(
    ("ci", "outcome"),
    [
        ("true", pytest.fail.Exception),
        ("", pytest.skip.Exception),
        ("false", pytest.skip.Exception),
    ],
)
def test_missing_fails_under_ci_and_skips_elsewhere(
    ci: str, outcome: type[BaseException], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match=r"redis-server is not installed \(apt-get install"):
        missing("redis-server is not installed", "apt-get install redis-server")
