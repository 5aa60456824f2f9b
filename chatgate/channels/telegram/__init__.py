"""Telegram channel on python-telegram-bot: polling or webhook, native HTML, inline keyboards."""
