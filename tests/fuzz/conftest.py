"""The `fuzz` hypothesis profile: a few hundred examples per target in `make test`, many more
with CHATGATE_FUZZ_EXAMPLES or CHATGATE_FUZZ_EXAMPLES_<TARGET> (what `make fuzz` sets)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

DEFAULT_EXAMPLES = 200
EXAMPLES = int(os.environ.get("CHATGATE_FUZZ_EXAMPLES", DEFAULT_EXAMPLES))

settings.register_profile(
    "fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= DEFAULT_EXAMPLES,  # `make test` stays reproducible
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
FUZZ = settings.get_profile("fuzz")


def fuzz_settings(target: str, *, quick: int | None = None) -> settings:
    """The fuzz profile, with CHATGATE_FUZZ_EXAMPLES_<TARGET> overriding the example count;
    ``quick``: fewer examples in `make test` for targets that cost a daemon round trip each."""
    count = os.environ.get(f"CHATGATE_FUZZ_EXAMPLES_{target.upper()}")
    if count:  # `make fuzz`: fresh random examples every run
        return settings(FUZZ, max_examples=int(count), derandomize=False)
    if quick is not None and EXAMPLES == DEFAULT_EXAMPLES:
        return settings(FUZZ, max_examples=quick)
    return FUZZ
