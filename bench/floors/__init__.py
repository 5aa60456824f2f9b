"""Floors: the least a competent bare implementation does for the same job, run as processes."""
