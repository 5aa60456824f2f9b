"""The `fuzz` hypothesis profile: a few hundred examples per target in `make test`, many more
with CHATGATE_FUZZ_EXAMPLES (what `make fuzz` sets)."""

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
