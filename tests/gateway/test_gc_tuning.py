"""GcTuning: start-up objects frozen and a larger young generation while a gateway runs, and
everything as it was once it stops (tests and the bench run many gateways in one process)."""

from __future__ import annotations

import gc

from chatgate.gateway.process.gc_tuning import YOUNG_THRESHOLD, GcTuning


def test_apply_then_undo_restores_the_collector() -> None:
    before = gc.get_threshold()
    tuning = GcTuning()
    try:
        tuning.apply()
        tuning.apply()  # idempotent: the saved settings stay the original ones
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
        tuning.refreeze()
    finally:
        tuning.undo()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    tuning.undo()  # a second stop changes nothing
    tuning.refreeze()  # nor does a warm-up finishing after the stop
    assert gc.get_freeze_count() == 0
