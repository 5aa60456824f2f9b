"""A human takes over a chat: pause the bot there, reply as the bot, resume (`service.py`), over
`/api/chats` (`api.py`) for the CLI (`chatgate chats`) and the dashboard."""
