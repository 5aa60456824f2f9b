"""English texts (the reference language: every other language has the same ids)."""

from __future__ import annotations

from chatgate.model.text_ids import Template
from chatgate.model.text_ids import TextId as T

TEXTS: dict[T, Template] = {
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
    T.FAILURE_TOOL_LIMIT: (
        "That needed more steps than I can take for one message, so I stopped. "
        "Please split your request into smaller parts."
    ),
    T.FAILURE_TOOL_TIMEOUT: (
        "A tool I was using took too long to answer, so I stopped. Please try again in a minute."
    ),
    T.FAILURE_TOOL_BUDGET: (
        "That needed more work than I can do for one message, so I stopped. "
        "Please ask for less at once."
    ),
    T.FAILURE_TOOL_FAILED: (
        "A tool I was using stopped working, so I couldn't finish. Please try again in a minute."
    ),
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
    T.STATE_AWAY: (
        "I can't reach my memory right now. I'll answer this as soon as it's back; "
        "no need to resend."
    ),
    T.MEDIA_TOO_LARGE: (
        "{name} is larger than {max}, the most this bot accepts; send a smaller file."
    ),
    T.MEDIA_TOO_LARGE_TELEGRAM: (
        "{name} is larger than {max}, the most this bot accepts (Telegram lets bots "
        "download files of up to 20 MB); send a smaller file."
    ),
    T.MEDIA_TOO_LONG: "{name} is longer than {duration}, the most this bot transcribes.",
    T.MEDIA_TOO_MANY: {
        "one": "{name} was skipped: at most {count} file per message is read.",
        "other": "{name} was skipped: at most {count} files per message are read.",
    },
    T.MEDIA_TURN_TOTAL: "{name} was skipped: the files of one message may total {max}.",
    T.MEDIA_UNSUPPORTED: "{name}: this file type can't be read; only its name was passed on.",
    T.MEDIA_NO_VISION: "{name}: this assistant can't see images.",
    T.MEDIA_CORRUPT: "{name} could not be opened (damaged or not what it claims to be).",
    T.MEDIA_NO_TEXT: "{name} has no text layer (a scan?); only its name was passed on.",
    T.MEDIA_DOWNLOAD_FAILED: "{name} could not be downloaded; please send it again.",
    T.MEDIA_TRANSCRIPTION_FAILED: (
        "{name}: the voice message could not be transcribed; please type it or try again."
    ),
    T.MEDIA_DISABLED: "{name}: this assistant does not read files.",
    T.MEDIA_HEARD: "Heard: {text}",
    T.MEDIA_NAME_IMAGE: "photo",
    T.MEDIA_NAME_VOICE: "voice message",
    T.MEDIA_NAME_AUDIO: "audio",
    T.MEDIA_NAME_VIDEO: "video",
    T.MEDIA_NAME_DOCUMENT: "document",
    T.MEDIA_NAME_STICKER: "sticker",
    T.FILE_TOO_LARGE: "📎 {name} could not be attached: it is over the {max} limit.",
    T.FILE_NOT_ATTACHED: "📎 {name} could not be attached.",
    T.FILE_GONE: "📎 {name} is no longer available.",
    T.FILE_SENT: "📎 {name}: sent.",
    T.FILE_DECLINED: "📎 {name}: declined, not sent.",
    T.TAKEOVER_PAUSED: (
        "Bot paused in this chat: a person answers here now. Send {on} to switch it back on."
    ),
    T.TAKEOVER_PAUSED_FOR: (
        "Bot paused in this chat: a person answers here now. It switches back on in {wait}, "
        "or send {on}."
    ),
    T.TAKEOVER_RESUMED: "Bot back on in this chat.",
    T.APPROVAL_PROMPT: (
        "🔐 The assistant wants to use {tool} with {arguments}\nAllow it? (expires in {expires})"
    ),
    T.APPROVAL_REPLY_HINT: "Reply yes or no.",
    T.APPROVAL_TAINTED: "⚠️ Asked because the conversation holds untrusted content ({sources}).",
    T.APPROVAL_APPROVE: "Approve",
    T.APPROVAL_DENY: "Deny",
    T.APPROVAL_APPROVED: "✅ {tool}: approved by {name}.",
    T.APPROVAL_DENIED: "❌ {tool}: denied by {name}.",
    T.APPROVAL_TIMED_OUT: "⌛ {tool}: no answer within {wait}, so it was not run.",
    T.APPROVAL_CANCELLED: "✖️ {tool}: no longer needed.",
    T.APPROVAL_NOT_YOURS: "Only the person who asked can answer this.",
    T.TOOL_PROGRESS: "using {tools}…",
}

# Status, empty answers, menus and delivery notes (a dict: one form per plural category).
TEXTS.update(
    {
        T.HELP_JOBS: "your scheduled messages",
        T.STATUS_UP: "I'm up and running.",
        T.STATUS_AGENT: "Agent: {assistant}",
        T.STATUS_AGENT_MODEL: "Agent: {assistant} ({model})",
        T.STATUS_HISTORY: {
            "one": "This conversation: {count} message in context",
            "other": "This conversation: {count} messages in context",
        },
        T.STATUS_WORKING: "Working on your message now.",
        T.STATUS_WORKING_QUEUED: {
            "one": "Working on your message now, {count} more waiting.",
            "other": "Working on your message now, {count} more waiting.",
        },
        T.EMPTY_REPLY: (
            "I don't have an answer to that — "
            "try rephrasing your message or adding a bit more detail."
        ),
        T.MENU_CHOOSE: "Choose an option:",
        T.MENU_OPEN_LIST: "Choose…",
        T.DEGRADE_NOTE: "(Note: {items}.)",
        T.DEGRADE_LABELS_SHORTENED: {
            "one": "{count} label shortened",
            "other": "{count} labels shortened",
        },
        T.DEGRADE_MENUS_AS_TEXT: {
            "one": "{count} menu rendered as text",
            "other": "{count} menus rendered as text",
        },
        T.DEGRADE_BUTTON_VALUES_SHORTENED: {
            "one": "{count} button value shortened",
            "other": "{count} button values shortened",
        },
        T.DEGRADE_OPTION_VALUES_SHORTENED: {
            "one": "{count} option value shortened",
            "other": "{count} option values shortened",
        },
        T.DEGRADE_BUTTONS_DROPPED: {
            "one": "{count} button dropped",
            "other": "{count} buttons dropped",
        },
        T.DEGRADE_OPTIONS_DROPPED: {
            "one": "{count} option dropped",
            "other": "{count} options dropped",
        },
        T.DEGRADE_OPTIONS_REPEATED: {
            "one": "{count} option with a repeated value dropped",
            "other": "{count} options with a repeated value dropped",
        },
        T.DEGRADE_FORMATTING_PLAIN: "formatting shown as plain text",
        T.DEGRADE_BUTTONS_AS_TEXT: {
            "one": "{count} button rendered as text",
            "other": "{count} buttons rendered as text",
        },
        T.DEGRADE_LINK_BUTTONS_AS_TEXT: {
            "one": "{count} link button rendered as text",
            "other": "{count} link buttons rendered as text",
        },
        T.DEGRADE_BUTTONS_AS_LIST: {
            "one": "{count} button shown as a list",
            "other": "{count} buttons shown as a list",
        },
        T.DEGRADE_SELECTS_AS_BUTTONS: {
            "one": "{count} select menu rendered as buttons",
            "other": "{count} select menus rendered as buttons",
        },
        T.DEGRADE_SELECTS_AS_TEXT: {
            "one": "{count} select menu rendered as text",
            "other": "{count} select menus rendered as text",
        },
        T.DEGRADE_TABLE_ROWS: {
            "one": "table truncated to {kept} of {count} row",
            "other": "table truncated to {kept} of {count} rows",
        },
        T.DEGRADE_TABLE_COLUMNS: {
            "one": "table truncated to {kept} of {count} column",
            "other": "table truncated to {kept} of {count} columns",
        },
        T.DEGRADE_TABLES_AS_TEXT: {
            "one": "{count} table rendered as text",
            "other": "{count} tables rendered as text",
        },
        T.DEGRADE_CHARTS_AS_TEXT: {
            "one": "{count} chart rendered as text",
            "other": "{count} charts rendered as text",
        },
        T.DEGRADE_IMAGES_AS_LINKS: {
            "one": "{count} image sent as a link",
            "other": "{count} images sent as links",
        },
        T.DEGRADE_FILES_UNSUPPORTED: {
            "one": "{count} file not attached (this chat takes no files)",
            "other": "{count} files not attached (this chat takes no files)",
        },
        T.DEGRADE_FILES_TOO_LARGE: {
            "one": "{count} file over the size limit not attached",
            "other": "{count} files over the size limit not attached",
        },
        T.DEGRADE_FILES_AS_DOCUMENTS: {
            "one": "{count} file sent as a document",
            "other": "{count} files sent as documents",
        },
        T.DEGRADE_VOICE_AS_AUDIO: {
            "one": "{count} voice note sent as audio",
            "other": "{count} voice notes sent as audio",
        },
        T.DEGRADE_IMAGES_AS_FILES: {
            "one": "{count} image sent as a file",
            "other": "{count} images sent as files",
        },
        T.DEGRADE_CAPTIONS_AS_TEXT: {
            "one": "{count} caption sent as text",
            "other": "{count} captions sent as text",
        },
    }
)

# /jobs in chat.
TEXTS.update(
    {
        T.JOBS_NONE: "You have no scheduled jobs.",
        T.JOBS_TITLE: "Your scheduled jobs:",
        T.JOBS_LINE: "• {id}: {schedule}, {when}",
        T.JOBS_NEXT: "next {time}",
        T.JOBS_NOT_SCHEDULED: "not scheduled",
        T.JOBS_PAUSED: "(paused)",
        T.JOBS_REMOVE_HINT: "Remove one with {command}.",
        T.JOBS_REMOVED: "Removed {id}.",
        T.JOBS_UNKNOWN: "You have no job called {id}.",
    }
)

# What a renderer could not fit (one form per plural category).
TEXTS.update(
    {
        T.RENDER_OPTIONS_HIDDEN: {
            "one": "{count} more option not shown",
            "other": "{count} more options not shown",
        },
        T.RENDER_ROWS_HIDDEN: {
            "one": "{count} more row not shown",
            "other": "{count} more rows not shown",
        },
        T.RENDER_COLUMNS_HIDDEN: {
            "one": "{count} more column not shown",
            "other": "{count} more columns not shown",
        },
    }
)

# Spend budgets: the refusal, the one warning per period, /usage.
TEXTS.update(
    {
        T.BUDGET_REFUSED: (
            "You've used up your allowance for now, so I can't answer this. It renews in {wait}."
        ),
        T.BUDGET_WARN: (
            "Heads-up: you have used {share} of your allowance for this period."
            " It renews in {wait}."
        ),
        T.USAGE_TITLE: "Your usage this period:",
        T.USAGE_LINE: "• {rule}: {used} of {limit} ({share}), renews in {wait}",
        T.USAGE_NONE: "No spending limits apply to you here.",
    }
)
