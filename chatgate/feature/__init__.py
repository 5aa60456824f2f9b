"""The seam a cross-cutting feature (schedules, takeover, approvals, media, …) plugs in through.

A feature lives in its own folder, subclasses `Feature`, receives a `FeatureContext` (narrow
interfaces onto the running gateway, never the gateway itself) and is added with one line in
`gateway/builder.py`.
"""
