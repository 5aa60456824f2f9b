"""A python-agent module whose import fails with something other than ImportError."""

raise RuntimeError("module-level setup failed")
