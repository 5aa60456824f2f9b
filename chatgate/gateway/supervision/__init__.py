"""Channels under supervision: the directory of running adapters, their exclusive leases across
replicas, the restart ladder with its fleet breaker, and the degraded owners read fail-closed."""
