"""Tool approval in the chat: a turn asks a person before an `ask` tool call runs, and their
press or yes/no reply answers it before the session queue (the turn is waiting for it)."""
