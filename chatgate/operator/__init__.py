"""The operator interface, declared once: each action's name, typed arguments, typed result and
handler (`catalog.py`), read by the HTTP API, the CLI and the dashboard."""
