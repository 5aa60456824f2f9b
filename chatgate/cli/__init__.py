"""The `chatgate` command."""
