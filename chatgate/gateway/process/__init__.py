"""The daemon as a process: event loop, systemd notification, liveness, memory pressure, the
state-dir lock, log output and allocator/GC tuning."""
