"""chatgate benchmark harness: each scenario against chatgate and against its floor.

Run from the repository root: ``python -m bench`` (``--quick``, ``--only pipeline,webhook``).
See bench/README.md for what each scenario measures and how to read the numbers.
"""
