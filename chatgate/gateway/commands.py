"""Built-in chat commands and the short notices the gateway itself sends to users."""

from __future__ import annotations

from enum import StrEnum

from chatgate.policies.pairing import CODE_TTL_S


class Command(StrEnum):
    NEW = "new"
    STOP = "stop"
    STATUS = "status"
    HELP = "help"
    JOBS = "jobs"  # answered by a handler the gateway registers (the scheduler's)


def parse_command(text: str) -> Command | None:
    """`/new`, `/stop@mybot` … → Command; anything else (including unknown commands) → None."""
    if not text.startswith("/"):
        return None
    head = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
    name = head.split("@", 1)[0].lower()
    try:
        return Command(name)
    except ValueError:
        return None


HELP_TEXT = (
    "Commands:\n"
    "/new — start a fresh conversation\n"
    "/stop — cancel the answer in progress\n"
    "/status — what I'm doing right now\n"
    "/help — this list"
)
STOPPED_TEXT = "Stopped."
NOTHING_TO_STOP_TEXT = "Nothing to stop — I'm not working on anything for you right now."
QUEUE_FULL_TEXT = (
    "I'm still working on your earlier messages, so I skipped this one. "
    "Please wait for my answer, then resend."
)
PAIRING_FULL_TEXT = "I can't take new access requests right now. Please try again in an hour."
APPROVED_TEXT = "You now have access. Send your message again and I'll answer."


def pairing_text(channel: str, code: str, name: str = "") -> str:
    greeting = f"Hi {name}! " if name else "Hi! "
    minutes = int(CODE_TTL_S // 60)
    return (
        f"{greeting}I don't know you yet, so I can't answer. To get access, send this code to the "
        f"person who runs this bot:\n\n{code}\n\n"
        f"They approve it with: chatgate pairing approve {channel} {code}\n"
        f"The code expires in {minutes} minutes."
    )


def rate_limited_text(retry_after_s: float) -> str:
    wait = max(1, round(retry_after_s))
    return (
        "You're sending messages faster than I can answer, so I skipped this one. "
        f"Please wait {wait} s and resend."
    )


def status_text(*, agent: str, model: str | None, history: int, queued: int, running: bool) -> str:
    lines = ["I'm up and running."]
    lines.append(f"Agent: {agent}" + (f" ({model})" if model else ""))
    lines.append(f"This conversation: {history} messages in context")
    if running:
        lines.append(
            "Working on your message now" + (f", {queued} more waiting." if queued else ".")
        )
    return "\n".join(lines)
