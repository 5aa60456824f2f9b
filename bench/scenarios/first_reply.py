"""First reply after ready: one message sent the moment a freshly started subject is ready.

Every channel scenario starts the floor and then chatgate one at a time (so neither's start-up
competes with the other's for the CPU), waits for the subject's own sign of readiness (its first
socket or poll at the fake, or ``/readyz`` / the floor's ``READY`` line for channels that are
posted to), sends one message at once and reports the seconds from ready to the reply's arrival
at the fake. It is also the subject's warm-up: the bursts that follow find it warm.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from bench.procs import Proc, wait_until
from bench.stats import Spec

TIMEOUT_S = 120.0  # a subject imports litellm (seconds on a busy machine) before it is ready
TARGET_S = 0.5
POLL_S = 0.005


def spec(ready: str, variant: str = "") -> Spec:
    """The row: ``ready`` names what counts as ready; one row per variant (llm, echo)."""
    name = f"{variant}_first_reply_s" if variant else "first_reply_s"
    label = f"{variant}: " if variant else ""
    return Spec(name, f"{label}first reply after ready ({ready})", "s", "lower", TARGET_S)


async def wait_ready_at(
    ready_at: Callable[[], float | None], what: str, procs: Sequence[Proc]
) -> float:
    """Poll until the subject is ready; the (monotonic) time it became so."""
    await wait_until(lambda: ready_at() is not None, TIMEOUT_S, f"{what} ready", procs=procs)
    at = ready_at()
    assert at is not None
    return at


async def first_reply(
    what: str,
    ready_at: float,
    send: Callable[[], Awaitable[object]],
    replied_at: Callable[[], float | None],
    procs: Sequence[Proc],
) -> float:
    """Send one message now; seconds from ``ready_at`` to ``replied_at()`` (the fake's clock)."""
    await send()
    await wait_until(
        lambda: replied_at() is not None,
        TIMEOUT_S,
        f"{what} first reply",
        procs=procs,
        interval=POLL_S,
    )
    at = replied_at()
    assert at is not None
    return at - ready_at
