"""Agent backends behind one contract: litellm (default), echo, python callable, http."""
