"""The tool loop of the litellm agent: tool specs, sources, the loop and its trail."""
