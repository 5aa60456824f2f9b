"""OpenTelemetry trace export, plugged in as a feature (the call sites use `chatgate.tracing`)."""
