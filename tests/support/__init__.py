"""Helpers shared by the test suites (waiting, real servers)."""
