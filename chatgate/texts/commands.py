"""How a chat command is written on each platform, and the help list built from it."""

from __future__ import annotations

from dataclasses import dataclass

# (command name, help text id suffix) in the order help lists them
HELP_ORDER = ("new", "stop", "status", "jobs", "help")


@dataclass(frozen=True)
class CommandStyle:
    """``/new`` on most platforms; on Slack, where a message starting with "/" never reaches
    the bot, the app's slash command with the name as its argument (``/chatgate new``)."""

    slash_command: str | None = None

    def form(self, name: str) -> str:
        if self.slash_command:
            return f"{self.slash_command} {name}"
        return f"/{name}"


PLAIN = CommandStyle()


def style_for(platform: str, slash_command: str | None) -> CommandStyle:
    """The command style of a channel from its platform and configured slash command."""
    if platform == "slack":
        return CommandStyle(slash_command or "/chatgate")
    return PLAIN
