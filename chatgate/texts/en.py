"""English texts (the reference language: every other language has the same ids)."""

from __future__ import annotations

from chatgate.texts.ids import TextId as T

TEXTS: dict[T, str] = {
    T.FAILURE_SETUP: (
        "Sorry, I can't answer right now because of a problem on my side. Please try again later."
    ),
    T.FAILURE_BUSY: (
        "I'm getting more requests than I can handle right now. Please try again in a minute."
    ),
    T.FAILURE_BUSY_WAIT: (
        "I'm getting more requests than I can handle right now. Please try again in {wait}."
    ),
    T.FAILURE_TIMEOUT: (
        "That took me too long, so I stopped. "
        "Please resend, or split your request into smaller parts."
    ),
    T.FAILURE_TOO_LONG: (
        "This conversation has grown too long for me. "
        "Send {new} to start a fresh one, or send a shorter message."
    ),
    T.FAILURE_CANCELLED: "That request was cancelled.",
    T.FAILURE_INVALID: "I couldn't process that request. Please rephrase it and try again.",
    T.FAILURE_UNAVAILABLE: (
        "I can't answer right now because a service I depend on is down. "
        "Please try again in a few minutes."
    ),
    T.FAILURE_UNAVAILABLE_WAIT: (
        "I can't answer right now because a service I depend on is down. "
        "Please try again in {wait}."
    ),
    T.FAILURE_OVERLOADED_HERE: "I'm busy right now, please resend in a minute.",
    T.FAILURE_UNKNOWN: "Something went wrong while answering. Please resend your message.",
    T.HELP_TITLE: "Commands:",
    T.HELP_NEW: "start a fresh conversation",
    T.HELP_STOP: "cancel the answer in progress",
    T.HELP_STATUS: "what I'm doing right now",
    T.HELP_HELP: "this list",
    T.STOPPED: "Stopped.",
    T.NOTHING_TO_STOP: "Nothing to stop — I'm not working on anything for you right now.",
    T.NEW_SESSION: (
        "Started a new conversation. Earlier messages are no longer part of the context."
    ),
    T.QUEUE_FULL: (
        "I'm still working on your earlier messages, so I skipped this one. "
        "Please wait for my answer, then resend."
    ),
    T.RATE_LIMITED: (
        "You're sending messages faster than I can answer, so I skipped this one. "
        "Please wait {wait} and resend."
    ),
    T.PAIRING_PROMPT: (
        "{hello} I don't know you yet, so I can't answer. To get access, send this code to the "
        "person who runs this bot:\n\n{code}\n\nThe code expires in {expires}."
    ),
    T.PAIRING_HELLO: "Hi {name}!",
    T.PAIRING_HELLO_ANONYMOUS: "Hi!",
    T.PAIRING_FULL: "I can't take new access requests right now. Please try again in an hour.",
    T.PAIRING_APPROVED: "You now have access. Send your message again and I'll answer.",
    T.STALE_NOTICE: "I was offline when you wrote this. Please resend it if it's still relevant.",
}
