"""The inbound side of the message path: dedupe and journal, the stages, the session queue."""
