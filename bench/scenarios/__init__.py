"""The benchmark scenarios, in the order a full run executes them."""
