"""chatgate: a chat-bot gateway daemon connecting chat platforms and signed webhooks to LLM agents."""

__version__ = "0.1.0"
