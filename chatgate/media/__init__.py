"""Attachments between channels and agents: limits, type sniffing, stored files (no platform code)."""
