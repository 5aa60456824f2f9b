"""Cyclic-GC settings while a gateway runs, undone when it stops.

Start-up objects (modules, classes, config) live as long as the daemon, so they are frozen out
of full collections, which then only walk what was made since (a full collection over them took
36-100 ms under load). Objects of in-flight turns outlive the default 700 allocations under
load and get scanned again in older generations, so the young generation is larger. Tests and
the benchmark start many gateways in one process: `undo` lets their garbage be collected again.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 5_000


class GcTuning:
    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

    def apply(self) -> None:
        """Freeze what exists now and enlarge the young generation (once; see `refreeze`)."""
        if self._saved is None:
            self._saved = gc.get_threshold()
            gc.set_threshold(YOUNG_THRESHOLD, *self._saved[1:])
        gc.freeze()

    def refreeze(self) -> None:
        """Also freeze what a later warm-up (an SDK import) created."""
        if self._saved is not None:
            gc.freeze()

    def undo(self) -> None:
        if self._saved is not None:
            gc.unfreeze()
            gc.set_threshold(*self._saved)
            self._saved = None
