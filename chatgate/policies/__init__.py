"""Pure decisions: no I/O, no asyncio, no SDK imports. Small functions over frozen dataclasses."""
