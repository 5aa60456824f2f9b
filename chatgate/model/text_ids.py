"""Ids of every text a chat user can see; the catalog holds one template per id and language."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class TextId(StrEnum):
    """A user-facing text. Templates use ``{name}`` placeholders (see ``PLACEHOLDERS``)."""

    FAILURE_SETUP = "failure.setup"
    FAILURE_BUSY = "failure.busy"
    FAILURE_BUSY_WAIT = "failure.busy_wait"
    FAILURE_TIMEOUT = "failure.timeout"
    FAILURE_TOO_LONG = "failure.too_long"
    FAILURE_CANCELLED = "failure.cancelled"
    FAILURE_INVALID = "failure.invalid"
    FAILURE_UNAVAILABLE = "failure.unavailable"
    FAILURE_UNAVAILABLE_WAIT = "failure.unavailable_wait"
    FAILURE_OVERLOADED_HERE = "failure.overloaded_here"
    FAILURE_UNKNOWN = "failure.unknown"
    FAILURE_TOOL_LIMIT = "failure.tool_limit"
    FAILURE_TOOL_TIMEOUT = "failure.tool_timeout"
    FAILURE_TOOL_BUDGET = "failure.tool_budget"
    FAILURE_TOOL_FAILED = "failure.tool_failed"
    HELP_TITLE = "help.title"
    HELP_NEW = "help.new"
    HELP_STOP = "help.stop"
    HELP_STATUS = "help.status"
    HELP_HELP = "help.help"
    STOPPED = "command.stopped"
    NOTHING_TO_STOP = "command.nothing_to_stop"
    NEW_SESSION = "command.new_session"
    QUEUE_FULL = "notice.queue_full"
    RATE_LIMITED = "notice.rate_limited"
    PAIRING_PROMPT = "pairing.prompt"
    PAIRING_HELLO = "pairing.hello"
    PAIRING_HELLO_ANONYMOUS = "pairing.hello_anonymous"
    PAIRING_FULL = "pairing.full"
    PAIRING_APPROVED = "pairing.approved"
    STALE_NOTICE = "notice.stale"
    STATE_AWAY = "notice.state_away"  # the turn waits for the state store: answered later
    MEDIA_TOO_LARGE = "media.too_large"
    MEDIA_TOO_LARGE_TELEGRAM = "media.too_large_telegram"
    MEDIA_TOO_LONG = "media.too_long"
    MEDIA_TOO_MANY = "media.too_many"
    MEDIA_TURN_TOTAL = "media.turn_total"
    MEDIA_UNSUPPORTED = "media.unsupported"
    MEDIA_NO_VISION = "media.no_vision"
    MEDIA_CORRUPT = "media.corrupt"
    MEDIA_NO_TEXT = "media.no_text"
    MEDIA_DOWNLOAD_FAILED = "media.download_failed"
    MEDIA_TRANSCRIPTION_FAILED = "media.transcription_failed"
    MEDIA_DISABLED = "media.disabled"
    MEDIA_HEARD = "media.heard"
    MEDIA_NAME_IMAGE = "media.name.image"
    MEDIA_NAME_VOICE = "media.name.voice"
    MEDIA_NAME_AUDIO = "media.name.audio"
    MEDIA_NAME_VIDEO = "media.name.video"
    MEDIA_NAME_DOCUMENT = "media.name.document"
    MEDIA_NAME_STICKER = "media.name.sticker"
    FILE_TOO_LARGE = "files.too_large"
    FILE_NOT_ATTACHED = "files.not_attached"
    TAKEOVER_PAUSED = "takeover.paused"
    TAKEOVER_PAUSED_FOR = "takeover.paused_for"
    TAKEOVER_RESUMED = "takeover.resumed"
    APPROVAL_PROMPT = "approval.prompt"
    APPROVAL_REPLY_HINT = "approval.reply_hint"
    APPROVAL_TAINTED = "approval.tainted"  # why a tool under `auto` asks: untrusted content
    APPROVAL_APPROVE = "approval.approve"
    APPROVAL_DENY = "approval.deny"
    APPROVAL_APPROVED = "approval.approved"
    APPROVAL_DENIED = "approval.denied"
    APPROVAL_TIMED_OUT = "approval.timed_out"
    APPROVAL_CANCELLED = "approval.cancelled"
    APPROVAL_NOT_YOURS = "approval.not_yours"
    # -- status, empty answers, menus and delivery notes --
    HELP_JOBS = "help.jobs"
    STATUS_UP = "status.up"
    STATUS_AGENT = "status.agent"
    STATUS_AGENT_MODEL = "status.agent_model"
    STATUS_HISTORY = "status.history"
    STATUS_WORKING = "status.working"
    STATUS_WORKING_QUEUED = "status.working_queued"
    EMPTY_REPLY = "reply.empty"
    MENU_CHOOSE = "menu.choose"
    MENU_OPEN_LIST = "menu.open_list"
    DEGRADE_NOTE = "degrade.note"
    DEGRADE_LABELS_SHORTENED = "degrade.labels_shortened"
    DEGRADE_MENUS_AS_TEXT = "degrade.menus_as_text"
    DEGRADE_BUTTON_VALUES_SHORTENED = "degrade.button_values_shortened"
    DEGRADE_OPTION_VALUES_SHORTENED = "degrade.option_values_shortened"
    DEGRADE_BUTTONS_DROPPED = "degrade.buttons_dropped"
    DEGRADE_OPTIONS_DROPPED = "degrade.options_dropped"
    DEGRADE_OPTIONS_REPEATED = "degrade.options_repeated"
    DEGRADE_FORMATTING_PLAIN = "degrade.formatting_plain"
    DEGRADE_BUTTONS_AS_TEXT = "degrade.buttons_as_text"
    DEGRADE_LINK_BUTTONS_AS_TEXT = "degrade.link_buttons_as_text"
    DEGRADE_BUTTONS_AS_LIST = "degrade.buttons_as_list"
    DEGRADE_SELECTS_AS_BUTTONS = "degrade.selects_as_buttons"
    DEGRADE_SELECTS_AS_TEXT = "degrade.selects_as_text"
    DEGRADE_TABLE_ROWS = "degrade.table_rows"
    DEGRADE_TABLE_COLUMNS = "degrade.table_columns"
    DEGRADE_TABLES_AS_TEXT = "degrade.tables_as_text"
    DEGRADE_CHARTS_AS_TEXT = "degrade.charts_as_text"
    DEGRADE_IMAGES_AS_LINKS = "degrade.images_as_links"
    DEGRADE_FILES_UNSUPPORTED = "degrade.files_unsupported"
    DEGRADE_FILES_TOO_LARGE = "degrade.files_too_large"
    DEGRADE_FILES_AS_DOCUMENTS = "degrade.files_as_documents"
    DEGRADE_VOICE_AS_AUDIO = "degrade.voice_as_audio"
    DEGRADE_IMAGES_AS_FILES = "degrade.images_as_files"
    DEGRADE_CAPTIONS_AS_TEXT = "degrade.captions_as_text"
    JOBS_NONE = "jobs.none"
    JOBS_TITLE = "jobs.title"
    JOBS_LINE = "jobs.line"
    JOBS_NEXT = "jobs.next"
    JOBS_NOT_SCHEDULED = "jobs.not_scheduled"
    JOBS_PAUSED = "jobs.paused"
    JOBS_REMOVE_HINT = "jobs.remove_hint"
    JOBS_REMOVED = "jobs.removed"
    JOBS_UNKNOWN = "jobs.unknown"
    RENDER_OPTIONS_HIDDEN = "render.options_hidden"
    RENDER_ROWS_HIDDEN = "render.rows_hidden"
    RENDER_COLUMNS_HIDDEN = "render.columns_hidden"
    TOOL_PROGRESS = "tools.progress"
    FILE_GONE = "files.gone"
    FILE_SENT = "files.sent"  # a file offer (Teams file consent) answered: uploaded
    FILE_DECLINED = "files.declined"  # ... or declined
    BUDGET_REFUSED = "budget.refused"
    BUDGET_WARN = "budget.warn"
    USAGE_TITLE = "usage.title"
    USAGE_LINE = "usage.line"
    USAGE_NONE = "usage.none"


# A template, or for a text that counts something (``{count}``) one template per plural
# category of the language ("one", "few", "many", "other"), picked by Babel's plural rules.
Plural = Mapping[str, str]
Template = str | Plural


# The placeholders each template must use, in every language and every override.
PLACEHOLDERS: dict[TextId, frozenset[str]] = {
    TextId.FAILURE_BUSY_WAIT: frozenset({"wait"}),
    TextId.FAILURE_TOO_LONG: frozenset({"new"}),
    TextId.FAILURE_UNAVAILABLE_WAIT: frozenset({"wait"}),
    TextId.RATE_LIMITED: frozenset({"wait"}),
    TextId.PAIRING_PROMPT: frozenset({"hello", "code", "expires"}),
    TextId.PAIRING_HELLO: frozenset({"name"}),
    TextId.MEDIA_TOO_LARGE: frozenset({"name", "max"}),
    TextId.MEDIA_TOO_LARGE_TELEGRAM: frozenset({"name", "max"}),
    TextId.MEDIA_TOO_LONG: frozenset({"name", "duration"}),
    TextId.MEDIA_TOO_MANY: frozenset({"name", "count"}),
    TextId.MEDIA_TURN_TOTAL: frozenset({"name", "max"}),
    TextId.MEDIA_UNSUPPORTED: frozenset({"name"}),
    TextId.MEDIA_NO_VISION: frozenset({"name"}),
    TextId.MEDIA_CORRUPT: frozenset({"name"}),
    TextId.MEDIA_NO_TEXT: frozenset({"name"}),
    TextId.MEDIA_DOWNLOAD_FAILED: frozenset({"name"}),
    TextId.MEDIA_TRANSCRIPTION_FAILED: frozenset({"name"}),
    TextId.MEDIA_DISABLED: frozenset({"name"}),
    TextId.MEDIA_HEARD: frozenset({"text"}),
    TextId.FILE_TOO_LARGE: frozenset({"name", "max"}),
    TextId.FILE_NOT_ATTACHED: frozenset({"name"}),
    TextId.FILE_GONE: frozenset({"name"}),
    TextId.FILE_SENT: frozenset({"name"}),
    TextId.FILE_DECLINED: frozenset({"name"}),
    TextId.TAKEOVER_PAUSED: frozenset({"on"}),
    TextId.TAKEOVER_PAUSED_FOR: frozenset({"on", "wait"}),
    TextId.APPROVAL_PROMPT: frozenset({"tool", "arguments", "expires"}),
    TextId.APPROVAL_TAINTED: frozenset({"sources"}),
    TextId.APPROVAL_APPROVED: frozenset({"tool", "name"}),
    TextId.APPROVAL_DENIED: frozenset({"tool", "name"}),
    TextId.APPROVAL_TIMED_OUT: frozenset({"tool", "wait"}),
    TextId.APPROVAL_CANCELLED: frozenset({"tool"}),
    TextId.STATUS_AGENT: frozenset({"assistant"}),
    TextId.STATUS_AGENT_MODEL: frozenset({"assistant", "model"}),
    TextId.STATUS_HISTORY: frozenset({"count"}),
    TextId.STATUS_WORKING_QUEUED: frozenset({"count"}),
    TextId.DEGRADE_NOTE: frozenset({"items"}),
    TextId.JOBS_LINE: frozenset({"id", "schedule", "when"}),
    TextId.JOBS_NEXT: frozenset({"time"}),
    TextId.JOBS_REMOVE_HINT: frozenset({"command"}),
    TextId.JOBS_REMOVED: frozenset({"id"}),
    TextId.JOBS_UNKNOWN: frozenset({"id"}),
    TextId.RENDER_OPTIONS_HIDDEN: frozenset({"count"}),
    TextId.RENDER_ROWS_HIDDEN: frozenset({"count"}),
    TextId.RENDER_COLUMNS_HIDDEN: frozenset({"count"}),
    TextId.DEGRADE_TABLE_ROWS: frozenset({"kept", "count"}),
    TextId.DEGRADE_TABLE_COLUMNS: frozenset({"kept", "count"}),
    **{
        t: frozenset({"count"})
        for t in TextId
        if t.value.startswith("degrade.")
        and t
        not in (
            TextId.DEGRADE_NOTE,
            TextId.DEGRADE_FORMATTING_PLAIN,
            TextId.DEGRADE_TABLE_ROWS,
            TextId.DEGRADE_TABLE_COLUMNS,
        )
    },
    TextId.TOOL_PROGRESS: frozenset({"tools"}),
    TextId.BUDGET_REFUSED: frozenset({"wait"}),
    TextId.BUDGET_WARN: frozenset({"share", "wait"}),
    TextId.USAGE_LINE: frozenset({"rule", "used", "limit", "share", "wait"}),
}
# Texts whose wording follows ``{count}``: shipped with a form per plural category.
PLURALS: frozenset[TextId] = frozenset(t for t, names in PLACEHOLDERS.items() if "count" in names)


def placeholders(text_id: TextId) -> frozenset[str]:
    return PLACEHOLDERS.get(text_id, frozenset())
