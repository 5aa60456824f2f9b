"""gateway.yaml keys for texts: ``language``, ``failure_replies`` and per-id ``texts``
overrides, checked at load so a typo in an id or a placeholder exits 78 naming its line."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from chatgate.config.base import StrictModel
from chatgate.model.text_ids import TextId
from chatgate.texts.catalog import ANY_LANGUAGE, Overrides, template_problem

Language = Literal["en", "de", "es", "fr", "ru"]
FailureReplies = Literal["user", "verbose"]
# One template for every language, or one per language code.
Override = str | dict[Language, str]


class TextOverrides(StrictModel):
    """One optional override per catalog id (``failure.setup: "…"``); unknown ids are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)

    failure_setup: Override | None = Field(None, alias="failure.setup")
    failure_busy: Override | None = Field(None, alias="failure.busy")
    failure_busy_wait: Override | None = Field(None, alias="failure.busy_wait")
    failure_timeout: Override | None = Field(None, alias="failure.timeout")
    failure_too_long: Override | None = Field(None, alias="failure.too_long")
    failure_cancelled: Override | None = Field(None, alias="failure.cancelled")
    failure_invalid: Override | None = Field(None, alias="failure.invalid")
    failure_unavailable: Override | None = Field(None, alias="failure.unavailable")
    failure_unavailable_wait: Override | None = Field(None, alias="failure.unavailable_wait")
    failure_overloaded_here: Override | None = Field(None, alias="failure.overloaded_here")
    failure_unknown: Override | None = Field(None, alias="failure.unknown")
    failure_tool_limit: Override | None = Field(None, alias="failure.tool_limit")
    failure_tool_timeout: Override | None = Field(None, alias="failure.tool_timeout")
    failure_tool_budget: Override | None = Field(None, alias="failure.tool_budget")
    failure_tool_failed: Override | None = Field(None, alias="failure.tool_failed")
    help_title: Override | None = Field(None, alias="help.title")
    help_new: Override | None = Field(None, alias="help.new")
    help_stop: Override | None = Field(None, alias="help.stop")
    help_status: Override | None = Field(None, alias="help.status")
    help_help: Override | None = Field(None, alias="help.help")
    stopped: Override | None = Field(None, alias="command.stopped")
    nothing_to_stop: Override | None = Field(None, alias="command.nothing_to_stop")
    new_session: Override | None = Field(None, alias="command.new_session")
    queue_full: Override | None = Field(None, alias="notice.queue_full")
    rate_limited: Override | None = Field(None, alias="notice.rate_limited")
    pairing_prompt: Override | None = Field(None, alias="pairing.prompt")
    pairing_hello: Override | None = Field(None, alias="pairing.hello")
    pairing_hello_anonymous: Override | None = Field(None, alias="pairing.hello_anonymous")
    pairing_full: Override | None = Field(None, alias="pairing.full")
    pairing_approved: Override | None = Field(None, alias="pairing.approved")
    stale_notice: Override | None = Field(None, alias="notice.stale")
    state_away: Override | None = Field(None, alias="notice.state_away")
    media_too_large: Override | None = Field(None, alias="media.too_large")
    media_too_large_telegram: Override | None = Field(None, alias="media.too_large_telegram")
    media_too_long: Override | None = Field(None, alias="media.too_long")
    media_too_many: Override | None = Field(None, alias="media.too_many")
    media_turn_total: Override | None = Field(None, alias="media.turn_total")
    media_unsupported: Override | None = Field(None, alias="media.unsupported")
    media_no_vision: Override | None = Field(None, alias="media.no_vision")
    media_corrupt: Override | None = Field(None, alias="media.corrupt")
    media_no_text: Override | None = Field(None, alias="media.no_text")
    media_download_failed: Override | None = Field(None, alias="media.download_failed")
    media_transcription_failed: Override | None = Field(None, alias="media.transcription_failed")
    media_disabled: Override | None = Field(None, alias="media.disabled")
    media_heard: Override | None = Field(None, alias="media.heard")
    media_name_image: Override | None = Field(None, alias="media.name.image")
    media_name_voice: Override | None = Field(None, alias="media.name.voice")
    media_name_audio: Override | None = Field(None, alias="media.name.audio")
    media_name_video: Override | None = Field(None, alias="media.name.video")
    media_name_document: Override | None = Field(None, alias="media.name.document")
    media_name_sticker: Override | None = Field(None, alias="media.name.sticker")
    files_too_large: Override | None = Field(None, alias="files.too_large")
    files_not_attached: Override | None = Field(None, alias="files.not_attached")
    files_gone: Override | None = Field(None, alias="files.gone")
    files_sent: Override | None = Field(None, alias="files.sent")
    files_declined: Override | None = Field(None, alias="files.declined")
    takeover_paused: Override | None = Field(None, alias="takeover.paused")
    takeover_paused_for: Override | None = Field(None, alias="takeover.paused_for")
    takeover_resumed: Override | None = Field(None, alias="takeover.resumed")
    approval_prompt: Override | None = Field(None, alias="approval.prompt")
    approval_reply_hint: Override | None = Field(None, alias="approval.reply_hint")
    approval_tainted: Override | None = Field(None, alias="approval.tainted")
    approval_approve: Override | None = Field(None, alias="approval.approve")
    approval_deny: Override | None = Field(None, alias="approval.deny")
    approval_approved: Override | None = Field(None, alias="approval.approved")
    approval_denied: Override | None = Field(None, alias="approval.denied")
    approval_timed_out: Override | None = Field(None, alias="approval.timed_out")
    approval_cancelled: Override | None = Field(None, alias="approval.cancelled")
    approval_not_yours: Override | None = Field(None, alias="approval.not_yours")
    # status, empty answers, menus and delivery notes
    help_jobs: Override | None = Field(None, alias="help.jobs")
    status_up: Override | None = Field(None, alias="status.up")
    status_agent: Override | None = Field(None, alias="status.agent")
    status_agent_model: Override | None = Field(None, alias="status.agent_model")
    status_history: Override | None = Field(None, alias="status.history")
    status_working: Override | None = Field(None, alias="status.working")
    status_working_queued: Override | None = Field(None, alias="status.working_queued")
    reply_empty: Override | None = Field(None, alias="reply.empty")
    menu_choose: Override | None = Field(None, alias="menu.choose")
    menu_open_list: Override | None = Field(None, alias="menu.open_list")
    degrade_note: Override | None = Field(None, alias="degrade.note")
    degrade_labels_shortened: Override | None = Field(None, alias="degrade.labels_shortened")
    degrade_menus_as_text: Override | None = Field(None, alias="degrade.menus_as_text")
    degrade_button_values_shortened: Override | None = Field(
        None, alias="degrade.button_values_shortened"
    )
    degrade_option_values_shortened: Override | None = Field(
        None, alias="degrade.option_values_shortened"
    )
    degrade_buttons_dropped: Override | None = Field(None, alias="degrade.buttons_dropped")
    degrade_options_dropped: Override | None = Field(None, alias="degrade.options_dropped")
    degrade_options_repeated: Override | None = Field(None, alias="degrade.options_repeated")
    degrade_formatting_plain: Override | None = Field(None, alias="degrade.formatting_plain")
    degrade_buttons_as_text: Override | None = Field(None, alias="degrade.buttons_as_text")
    degrade_link_buttons_as_text: Override | None = Field(
        None, alias="degrade.link_buttons_as_text"
    )
    degrade_buttons_as_list: Override | None = Field(None, alias="degrade.buttons_as_list")
    degrade_selects_as_buttons: Override | None = Field(None, alias="degrade.selects_as_buttons")
    degrade_selects_as_text: Override | None = Field(None, alias="degrade.selects_as_text")
    degrade_table_rows: Override | None = Field(None, alias="degrade.table_rows")
    degrade_table_columns: Override | None = Field(None, alias="degrade.table_columns")
    degrade_tables_as_text: Override | None = Field(None, alias="degrade.tables_as_text")
    degrade_charts_as_text: Override | None = Field(None, alias="degrade.charts_as_text")
    degrade_images_as_links: Override | None = Field(None, alias="degrade.images_as_links")
    degrade_files_unsupported: Override | None = Field(None, alias="degrade.files_unsupported")
    degrade_files_too_large: Override | None = Field(None, alias="degrade.files_too_large")
    degrade_files_as_documents: Override | None = Field(None, alias="degrade.files_as_documents")
    degrade_voice_as_audio: Override | None = Field(None, alias="degrade.voice_as_audio")
    degrade_images_as_files: Override | None = Field(None, alias="degrade.images_as_files")
    degrade_captions_as_text: Override | None = Field(None, alias="degrade.captions_as_text")
    jobs_none: Override | None = Field(None, alias="jobs.none")
    jobs_title: Override | None = Field(None, alias="jobs.title")
    jobs_line: Override | None = Field(None, alias="jobs.line")
    jobs_next: Override | None = Field(None, alias="jobs.next")
    jobs_not_scheduled: Override | None = Field(None, alias="jobs.not_scheduled")
    jobs_paused: Override | None = Field(None, alias="jobs.paused")
    jobs_remove_hint: Override | None = Field(None, alias="jobs.remove_hint")
    jobs_removed: Override | None = Field(None, alias="jobs.removed")
    jobs_unknown: Override | None = Field(None, alias="jobs.unknown")
    render_options_hidden: Override | None = Field(None, alias="render.options_hidden")
    render_rows_hidden: Override | None = Field(None, alias="render.rows_hidden")
    render_columns_hidden: Override | None = Field(None, alias="render.columns_hidden")
    tools_progress: Override | None = Field(None, alias="tools.progress")
    budget_refused: Override | None = Field(None, alias="budget.refused")
    budget_warn: Override | None = Field(None, alias="budget.warn")
    usage_title: Override | None = Field(None, alias="usage.title")
    usage_line: Override | None = Field(None, alias="usage.line")
    usage_none: Override | None = Field(None, alias="usage.none")

    @field_validator("*")
    @classmethod
    def _placeholders(cls, value: Override | None, info: ValidationInfo) -> Override | None:
        if value is None or info.field_name is None:
            return value
        text_id = TextId(str(cls.model_fields[info.field_name].alias))
        templates = value.values() if isinstance(value, dict) else [value]
        for template in templates:
            problem = template_problem(text_id, template)
            if problem is not None:
                raise ValueError(problem)
        return value

    def as_overrides(self) -> Overrides:
        """text id → language (or ``*``) → template, for the Catalog."""
        out: dict[TextId, dict[str, str]] = {}
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            if value is None:
                continue
            by_language = dict(value) if isinstance(value, dict) else {ANY_LANGUAGE: value}
            out[TextId(str(info.alias))] = by_language
        return out
