"""Reason codes: every stage that drops, delays or changes a message records one of these.

Defined once and shared by metrics labels, structured logs, the decision trail in the
journal and user-visible replies, so an operator can always answer "why?".
"""

from __future__ import annotations

from enum import StrEnum


class AdmissionReason(StrEnum):
    """Verdict of the admission ladder."""

    ALLOWED = "allowed"
    BLOCKED = "blocked"
    NOT_IN_ALLOWLIST = "not_in_allowlist"
    CHAT_NOT_ALLOWED = "chat_not_allowed"
    DM_DISABLED = "dm_disabled"
    PAIRING_REQUIRED = "pairing_required"
    GROUP_MENTION_ONLY = "group_mention_only"
    COMMAND_ONLY = "command_only"
    OBSERVE = "observe"


class Gate(StrEnum):
    """Which step of the admission ladder decided."""

    BLOCKLIST = "blocklist"
    ALLOWLIST = "allowlist"
    DM_POLICY = "dm_policy"
    PAIRING = "pairing"
    GROUP_POLICY = "group_policy"
    DIRECT = "direct"


class DropReason(StrEnum):
    """Why a message never reached an agent turn (besides admission)."""

    DUPLICATE = "duplicate"
    SELF_MESSAGE = "self_message"
    EDITED_IGNORED = "edited_ignored"
    EMPTY_INPUT = "empty_input"
    FILTER_MISMATCH = "filter_mismatch"
    BOT_LOOP = "bot_loop"
    RATE_LIMITED_SENDER = "rate_limited_sender"
    RATE_LIMITED_CHAT = "rate_limited_chat"
    RATE_LIMITED_GLOBAL = "rate_limited_global"
    MEMORY_PRESSURE = "memory_pressure"
    DRAINING = "draining"
    QUEUE_FULL = "queue_full"
    STOPPED = "stopped"
    GUILD_NOT_ALLOWED = "guild_not_allowed"
    SYSTEM_MESSAGE = "system_message"
    UNSUPPORTED_INTERACTION = "unsupported_interaction"
    MALFORMED_UPDATE = "malformed_update"
    REACTION_IGNORED = "reaction_ignored"  # a reaction to a message is not a turn's input
    OTHER_RECIPIENT = "other_recipient"  # addressed to another account of the same platform app
    STALE = "stale"  # sent longer ago than the channel's stale.after_s when it reached intake
    EDIT_REPLACED = "edit_replaced"  # a queued message whose edit took its place (edits: replace)
    BEFORE_JOIN = "before_join"  # sent in a room before the bot joined it (history)
    INVITE_DECLINED = "invite_declined"  # a room invite the channel's auto_join did not accept
    UNDECRYPTABLE = "undecryptable"  # an encrypted event the bot holds no key for
    RETRACTED = "retracted"  # withdrawn (deleted/redacted) by its sender before its turn ran
    AUTOMATED_MAIL = "automated_mail"  # an auto-reply, bounce or list mail (RFC 3834)
    UNAUTHENTICATED = "unauthenticated"  # no dkim/spf/dmarc pass from our MTA, when required
    MESSAGE_TOO_LARGE = "message_too_large"  # larger than the channel takes (never fetched whole)
    CONVERSATION_UPDATE = "conversation_update"  # the bot or a member was added or removed
    TENANT_NOT_ALLOWED = "tenant_not_allowed"  # from an organisation outside the allowed tenants


class TakeoverReason(StrEnum):
    """A human took over a chat: what happened to a message or to the chat's pause."""

    PAUSED = "paused"  # a message in a paused chat: journaled and kept as context, not answered
    PAUSE = "pause"  # the chat was paused (CLI, dashboard or /bot off)
    RESUME = "resume"  # the chat was resumed (CLI, dashboard or /bot on)
    AUTO_RESUME = "auto_resume"  # the pause ran out (auto_resume_s, or the --for given)
    HUMAN_REPLY = "human_reply"  # an operator replied as the bot


class IngressReason(StrEnum):
    """Why an HTTP ingress answered 2xx before the turn finished."""

    ACCEPTED = "accepted"  # journaled; the reply follows asynchronously


class RefusalReason(StrEnum):
    """Why an HTTP ingress refused a delivery it could not take (a retryable 503)."""

    STATE_UNAVAILABLE = "state_unavailable"  # the journal cannot write (disk full, read-only)


class OutcomeKind(StrEnum):
    """Classification of an agent's final reply."""

    TEXT = "text"
    SILENCE = "silence"
    EMPTY = "empty"
    FAILURE = "failure"


class FailureReason(StrEnum):
    """Why a turn failed; each maps to a visible, actionable reply."""

    AUTH_EXPIRED = "auth_expired"
    AUTH_PERMANENT = "auth_permanent"
    MISSING_KEY = "missing_key"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"
    CONTEXT_OVERFLOW = "context_overflow"
    MODEL_NOT_FOUND = "model_not_found"
    BUDGET_EXHAUSTED = "budget_exhausted"
    PROVIDER_QUOTA = "provider_quota"  # the provider account is out of credit (insufficient_quota)
    CANCELLED = "cancelled"
    FORMAT_ERROR = "format_error"
    UNAVAILABLE = "unavailable"
    MEMORY_PRESSURE = "memory_pressure"
    TOOL_LIMIT = "tool_limit"  # the tool loop reached max_steps without a final answer
    TOOL_TIMEOUT = "tool_timeout"  # one tool call ran past its timeout
    TOOL_BUDGET = "tool_budget"  # the turn's token or wall-time budget for tool steps ran out
    TOOL_FAILED = "tool_failed"  # a tool's server died or broke the protocol mid-call
    UNKNOWN = "unknown"


class ToolCallStatus(StrEnum):
    """How one tool call ended (the trail in ``chatgate why``, the per-tool metrics)."""

    OK = "ok"
    ERROR = "error"  # the tool ran and reported an error; the model sees it and may retry
    BAD_ARGUMENTS = "bad_arguments"  # the model sent arguments that are not a JSON object
    UNKNOWN_TOOL = "unknown_tool"  # not offered to this agent (filtered, denied or vanished)
    DENIED = "denied"  # approval policy refused the call, or the approver pressed Deny
    APPROVAL_TIMEOUT = "approval_timeout"  # nobody answered the approval prompt in time
    TIMEOUT = "timeout"
    FAILED = "failed"  # the tool's server died or broke the protocol


class ApprovalReason(StrEnum):
    """How an approval prompt ended, or why a press (or a yes/no reply) changed nothing."""

    ASKED = "approval_asked"  # a prompt was posted
    APPROVED = "approved"
    DENIED = "denied"
    TIMED_OUT = "timed_out"  # no answer within approval_timeout_s: the call is not run
    CANCELLED = "approval_cancelled"  # the asking turn ended first (/stop, a newer message)
    NOT_APPROVER = "approval_not_approver"  # pressed by someone who may not decide: ignored
    ALREADY_DECIDED = "approval_already_decided"  # a second press, or a press after timeout
    UNKNOWN = "approval_unknown"  # the prompt's record is gone (purged, another state store)
    EDITED = "approval_edited"  # an edited message never answers a prompt
    NO_APPROVER = "approval_no_approver"  # nowhere to ask (no reply target, no approver)
    TAINT_NO_APPROVER = "taint_no_approver"  # a write tool in a tainted turn, nobody to ask


class TaintSource(StrEnum):
    """What made a turn's context untrusted (write tools then need a person's approval)."""

    TOOL_OUTPUT = "tool_output"  # a result of a tool marked untrusted_output (web, mail, files)
    DOCUMENT = "document"  # a fetched document's text (an attachment, a URL)
    OBSERVED = "observed"  # text from a sender who did not address the bot (group context)
    UNTRUSTED_ROUTE = "untrusted_route"  # an inbound email or webhook body on an untrusted route


class SendErrorKind(StrEnum):
    """Why an outbound send failed, as classified by the channel adapter."""

    RATE_LIMITED = "rate_limited"
    TARGET_NOT_FOUND = "target_not_found"
    FORBIDDEN = "forbidden"
    AUTH_FATAL = "auth_fatal"
    INVALID_REQUEST = "invalid_request"
    TRANSIENT = "transient"
    OUTSIDE_WINDOW = "outside_window"  # the platform allows only templates until the user writes
    UNKNOWN = "unknown"
    NO_REFERENCE = "no_reference"  # a proactive send to a chat the bot has no address for yet


class DegradeReason(StrEnum):
    """Why presentation had to change a message for a channel."""

    SELECT_UNSUPPORTED = "select_unsupported"
    BUTTONS_UNSUPPORTED = "buttons_unsupported"
    BUTTONS_TRUNCATED = "buttons_truncated"
    OPTIONS_TRUNCATED = "options_truncated"
    OPTIONS_DUPLICATED = "options_duplicated"
    TABLE_AS_TEXT = "table_rendered_as_text"
    TABLE_TRUNCATED = "table_truncated"
    CHART_AS_TEXT = "chart_rendered_as_text"
    IMAGE_AS_LINK = "image_rendered_as_link"
    CALLBACK_DATA_TOO_LONG = "callback_data_too_long"
    MARKDOWN_AS_PLAIN = "markdown_rendered_as_plain"
    LABEL_SHORTENED = "label_shortened"
    BUTTONS_AS_SELECT = "buttons_rendered_as_select"
    LINK_BUTTONS_AS_TEXT = "link_buttons_rendered_as_text"
    WIDGETS_AS_TEXT = "widgets_rendered_as_text"
    FILE_UNSUPPORTED = "file_unsupported"
    FILE_TOO_LARGE = "file_too_large"
    FILE_AS_DOCUMENT = "file_sent_as_document"
    VOICE_AS_AUDIO = "voice_sent_as_audio"
    IMAGE_AS_DOCUMENT = "image_sent_as_document"
    CAPTION_AS_TEXT = "caption_sent_as_text"
    FILE_MISSING = "file_missing"


class DeliveryStatus(StrEnum):
    """Final state of delivering one reply."""

    SENT = "sent"
    UNDELIVERED = "undelivered"
    DEAD_TARGET = "dead_target"
    NO_TARGET = "no_target"
    SUPPRESSED = "suppressed"
    HANDED_OFF = "handed_off"  # the replica now holding the channel sends the stored answer


class MediaReason(StrEnum):
    """What became of one attachment (journal, metrics, logs, the user's notice)."""

    IMAGE_SENT = "image_sent"  # passed to the model as an image part
    IMAGE_DESCRIBED = "image_described"  # described in words by the configured vision_model
    TRANSCRIBED = "transcribed"  # voice/audio became text
    DOCUMENT_TEXT = "document_text"  # text extracted (possibly truncated)
    FILE_NOTED = "file_noted"  # the model got name, type and size only
    TOO_LARGE = "media_too_large"
    TOO_LONG = "media_too_long"  # a voice note/audio longer than max_audio_s
    TOO_MANY = "media_too_many"
    TURN_TOTAL = "media_turn_total"  # the turn's files together exceed max_total_bytes
    UNSUPPORTED_TYPE = "media_unsupported_type"
    NO_VISION = "media_no_vision"  # the model cannot see images
    CORRUPT = "media_corrupt"  # unreadable image/PDF, or a decompression bomb
    NO_TEXT = "media_no_text"  # a PDF without a text layer
    DOWNLOAD_FAILED = "media_download_failed"
    TRANSCRIPTION_FAILED = "media_transcription_failed"
    DISABLED = "media_disabled"  # the agent has media understanding turned off


class ConfigEditReason(StrEnum):
    """Why a config change from the dashboard, the API or the CLI was refused or undone."""

    DISABLED = "config_edit_disabled"  # gateway.config_edit.enabled is false
    NOT_WRITABLE = "config_not_writable"  # a read-only mount, a ConfigMap, no permission
    CHANGED_ON_DISK = "config_changed_on_disk"  # someone else wrote the file since it was read
    INVALID = "config_invalid"  # the loader refused the text (issues name key path and line)
    CLEAR_SECRET = "config_clear_secret"  # a secret written in clear instead of ${VAR} / *_file
    NO_SUCH_BACKUP = "config_no_backup"  # rollback to a version that is not kept
    RELOAD_REJECTED = "config_reload_rejected"  # written, refused by the reload, put back


class PrivacyReason(StrEnum):
    """Privacy requests and retention (`chatgate people`, `retention:`): audit actions, and the
    reason an erased message's journal tombstone names."""

    SHOWN = "shown"  # an operator looked at what is stored about a person
    EXPORTED = "exported"  # an archive of a person's data was handed out
    ERASED = "erased"  # a person's data was removed (tombstones left for dedupe)
    RETENTION = "retention"  # content older than the channel's retention was purged
