"""Config from the dashboard: the effective config with each key's source, the file in an
editor checked as one types, a diff, and an apply that writes atomically, keeps the previous
versions, hot-reloads and is audited (`service.py`), over `/api/config` (`api.py`), the Config
page, and `chatgate config history|rollback` (`actions.py`)."""
