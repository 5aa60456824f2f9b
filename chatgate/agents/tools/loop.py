"""The tool loop: model call → tool calls (concurrent) → results → model call, until an answer.

Bounded by ``max_steps``, a per-call timeout and a per-turn token and wall-time budget; each
bound ends the turn with its ``FailureReason`` instead of hanging. Tool-level mistakes (unknown
tool, malformed arguments, a tool reporting an error, a denied call) go back to the model as
error results so it can correct itself; a timeout or a dead server ends the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatgate import tracing
from chatgate.agents.base import AgentError, EventCallback, ProgressCallback
from chatgate.agents.tools.types import (
    TOOL_CALL_EVENT,
    TOOL_STARTED_EVENT,
    ApprovalAnswer,
    ApprovalAsk,
    Approve,
    ToolCallRecord,
    ToolSource,
    ToolSpec,
    ToolUnavailable,
)
from chatgate.config.masking import masker_for
from chatgate.config.tool_models import AgentToolsConfig
from chatgate.model.reasons import ApprovalReason, FailureReason, TaintSource, ToolCallStatus
from chatgate.policies.taint import (
    ToolHints,
    effect_of,
    escalated,
    refusal,
    taint_label,
    untrusted_output,
)
from chatgate.policies.tools import (
    Approval,
    LoopUsage,
    ToolLimits,
    approval_for,
    cap_text,
    mask_arguments,
    stop_reason,
    wire_name,
)


@dataclass(frozen=True)
class RequestedCall:
    """One tool call as the model asked for it (``name`` is the wire name)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelStep:
    """One model answer: text, the tool calls it asks for, tokens spent, the raw message; the
    model that answered as the provider names it and why it stopped (for spans and metrics)."""

    text: str
    calls: Sequence[RequestedCall] = ()
    model: str | None = None
    message: Mapping[str, Any] = field(default_factory=dict)
    usage: Mapping[str, int] = field(default_factory=dict)
    response_model: str | None = None
    finish_reasons: tuple[str, ...] = ()

    @property
    def tokens(self) -> int:
        return int(self.usage.get("total_tokens", 0))


class Stretch:
    """Pauses an ``asyncio.timeout`` while someone is asked (overlapping waits are one pause):
    the bound moves out by the longest wait announced, and back to ``before + waited`` when the
    last wait ends, so the time spent waiting for a person never counts."""

    def __init__(self, timeout: asyncio.Timeout | None = None) -> None:
        self.timeout = timeout
        self._active = 0
        self._base: float | None = None
        self._began = 0.0
        self.paused_s = 0.0  # how long the bound was paused in all (overlaps counted once)

    @contextlib.asynccontextmanager
    async def paused(self, up_to_s: float) -> AsyncIterator[None]:
        timeout = self.timeout
        when = timeout.when() if timeout is not None else None
        if timeout is None or when is None:
            yield
            return
        now = asyncio.get_running_loop().time()
        if self._active == 0:
            self._base, self._began = when, now
        self._active += 1
        timeout.reschedule(max(when, now + up_to_s + 5.0))
        try:
            yield
        finally:
            self._active -= 1
            if self._active == 0 and self._base is not None:
                waited = asyncio.get_running_loop().time() - self._began
                self.paused_s += waited
                if not timeout.expired():  # it fired during the wait: the turn ends as timed out
                    timeout.reschedule(self._base + waited)


UNKNOWN_TOOL_NAME = "<unknown>"  # the trail's name for a tool the model made up
TRANSCRIPT_RESULT_CHARS = 2000  # a tool result as kept in the transcript for later turns
TRANSCRIPT_MAX_MESSAGES = 40  # tool-step messages kept per answer (the latest ones)


@dataclass(frozen=True)
class LoopResult:
    text: str
    model: str | None
    tokens: int
    trail: Sequence[ToolCallRecord]
    exchange: Sequence[Mapping[str, Any]] = ()  # the tool steps, as the transcript keeps them


def transcript_exchange(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tool-step messages of a turn, results capped, whole steps only (a tool message
    without its assistant call would be rejected by the model next turn)."""
    kept: list[dict[str, Any]] = []
    for message in messages:
        entry = dict(message)
        if entry.get("role") == "tool":
            entry["content"] = cap_text(str(entry.get("content") or ""), TRANSCRIPT_RESULT_CHARS)
        kept.append(entry)
    while len(kept) > TRANSCRIPT_MAX_MESSAGES:
        kept.pop(0)
        while kept and kept[0].get("role") == "tool":
            kept.pop(0)
    return kept


def loop_deadline_s(model_timeout_s: float, config: AgentToolsConfig | None) -> float:
    """Outer bound of one agent turn: one model call, or every step of a tool loop."""
    if config is None:
        return model_timeout_s + 5.0
    steps = config.max_steps + 1  # the answer after the last tool step is one more call
    bound = steps * model_timeout_s + config.max_steps * config.tool_timeout_s + 5.0
    return min(bound, config.budget_s + 5.0) if config.budget_s is not None else bound


Complete = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], Awaitable[ModelStep]]


def tool_definitions(specs: Iterable[ToolSpec]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """OpenAI-style tool definitions and the wire-name → tool-name map."""
    defs: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for spec in specs:
        wire = wire_name(spec.name, names)
        names[wire] = spec.name
        function: dict[str, Any] = {"name": wire, "parameters": dict(spec.parameters)}
        if spec.description:
            function["description"] = spec.description
        defs.append({"type": "function", "function": function})
    return defs, names


def progress_line(calls: Sequence[RequestedCall], names: Mapping[str, str]) -> str:
    """``github.search_issues, github.get_issue`` for one step's calls (the gateway words it
    as the catalog's ``tools.progress`` text in the chat's language)."""
    return ", ".join(dict.fromkeys(names.get(c.name, c.name) for c in calls))


class ToolLoop:
    """Runs one turn's tool loop for an agent; the trail also goes out as ``tool_call`` events."""

    def __init__(
        self,
        agent: str,
        source: ToolSource,
        config: AgentToolsConfig,
        *,
        secrets: Iterable[str] = (),
        on_event: EventCallback | None = None,
        on_progress: ProgressCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
        approve: Approve | None = None,
        taint: Iterable[str] = (),
    ) -> None:
        self._agent = agent
        self._source = source
        self._config = config
        self._secrets = frozenset(secrets)
        self._on_event = on_event
        self._on_progress = on_progress if config.show_tool_progress else None
        self._clock = clock
        self._limits = ToolLimits(config.max_steps, config.budget_tokens, config.budget_s)
        self._approvals = tuple(config.approval.items())
        self._approve = approve
        self._effects = tuple(config.effects.items())
        self._hints: dict[str, ToolHints] = {}
        self.taint: list[str] = list(dict.fromkeys(taint))  # what made the turn untrusted
        self._tainting: list[str] = []  # untrusted results of the running step
        self._shown: list[asyncio.Future[None]] = []  # status lines of approved calls
        self._asked: dict[str, int] = {}  # identical calls asked so far this turn
        self._budget = Stretch()  # the budget_s bound, paused while a person is asked
        self.trail: list[ToolCallRecord] = []

    async def run(self, messages: list[dict[str, Any]], complete: Complete) -> LoopResult:
        """Drive ``complete`` until it answers without tool calls; ``messages`` grows in place."""
        specs = await self._source.tools()
        self._hints = {spec.name: spec.hints for spec in specs}
        defs, names = tool_definitions(specs)
        budget = self._config.budget_s
        try:
            async with asyncio.timeout(budget) as self._budget.timeout:
                return await self._steps(messages, complete, defs or None, names)
        except TimeoutError:
            raise AgentError(
                FailureReason.TOOL_BUDGET, f"tool loop exceeded budget_s={budget}"
            ) from None

    async def _steps(
        self,
        messages: list[dict[str, Any]],
        complete: Complete,
        defs: list[dict[str, Any]] | None,
        names: Mapping[str, str],
    ) -> LoopResult:
        started = self._clock()
        tokens = 0
        rounds = 0
        first = len(messages)
        while True:
            step = await complete(messages, defs)
            tokens += step.tokens
            if not step.calls:
                exchange = transcript_exchange(messages[first:])
                return LoopResult(step.text, step.model, tokens, tuple(self.trail), exchange)
            elapsed = self._clock() - started - self._budget.paused_s  # not the approval waits
            usage = LoopUsage(rounds, tokens, elapsed)
            reason = stop_reason(usage, self._limits)
            if reason is not None:
                raise AgentError(reason, f"after {rounds} tool steps, {tokens} tokens")
            rounds += 1
            messages.append(dict(step.message))
            # The status line goes out while the tools run (its edit may wait out a rate limit);
            # a call that needs approval shows it only once approved (after its prompt).
            if self._on_progress is None or self._any_asked(step.calls, names):
                results = await self._calls(step.calls, names, rounds)
                if self._shown:
                    await asyncio.gather(*self._shown)
                    self._shown.clear()
            else:
                results, _ = await asyncio.gather(
                    self._calls(step.calls, names, rounds), self._progress(step.calls, names)
                )
            fatal: AgentError | None = None
            for call, (text, error) in zip(step.calls, results, strict=True):
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                fatal = fatal or error
            # The model read these results: the calls it asks for from now on are tainted.
            self.taint.extend(t for t in self._tainting if t not in self.taint)
            self._tainting.clear()
            if fatal is not None:
                raise fatal

    async def _calls(
        self, calls: Sequence[RequestedCall], names: Mapping[str, str], step: int
    ) -> list[tuple[str, AgentError | None]]:
        if self._config.parallel and len(calls) > 1:
            tasks = [asyncio.ensure_future(self._traced(c, names, step)) for c in calls]
            try:
                return list(await asyncio.gather(*tasks))
            finally:  # one that raised leaves none behind (a sibling's open prompt closes)
                for task in tasks:
                    task.cancel()
        return [await self._traced(c, names, step) for c in calls]

    def _any_asked(self, calls: Sequence[RequestedCall], names: Mapping[str, str]) -> bool:
        return any(self._approval(names.get(c.name, c.name))[0] is Approval.ASK for c in calls)

    def _approval(self, name: str) -> tuple[Approval, tuple[str, ...]]:
        """The call's approval rule, and the taint when it is what makes the call need asking
        (a ``write`` tool configured ``auto`` in a tainted turn)."""
        approval = approval_for(name, self._approvals)
        effect = effect_of(name, self._hints.get(name, ToolHints()), self._effects)
        if escalated(approval, effect, self.taint):
            return Approval.ASK, tuple(self.taint)
        return approval, ()

    def _taints(self, name: str) -> None:
        """Note a result of an ``untrusted_output`` tool (taints the next steps)."""
        hints = self._hints.get(name, ToolHints())
        if untrusted_output(name, hints, self._config.untrusted_output):
            self._tainting.append(taint_label(TaintSource.TOOL_OUTPUT, name))

    async def _ask(self, name: str, shown: Any, taint: tuple[str, ...] = ()) -> ApprovalAnswer:
        """Wait for the approval of one call; the wait does not count against the budget."""
        if self._approve is None:
            return ApprovalAnswer(ToolCallStatus.DENIED, ApprovalReason.NO_APPROVER.value)
        fingerprint = json.dumps([name, shown], sort_keys=True, default=str)
        occurrence = self._asked.get(fingerprint, 0)
        self._asked[fingerprint] = occurrence + 1
        ask = ApprovalAsk(self._agent, name, shown, occurrence, taint)
        async with self._budget.paused(self._config.approval_timeout_s):
            with tracing.span("chatgate.approval_wait", gen_ai__tool__name=name):
                return await self._approve(ask)

    async def _permit(
        self, name: str, shown: Any, approval: Approval, taint: tuple[str, ...]
    ) -> tuple[ApprovalAnswer, str | None]:
        """A ``deny`` or ``ask`` call's answer, and what the model is told when it may not run."""
        if approval is Approval.DENY:
            denied = ApprovalAnswer(ToolCallStatus.DENIED, "")
            return denied, f"error: the operator does not allow the tool {name!r}"
        refused = ApprovalAnswer(ToolCallStatus.DENIED, ApprovalReason.TAINT_NO_APPROVER.value)
        if taint and self._approve is None:  # a tainted write with nobody to ask: refused
            return refused, refusal(name, taint)
        answer = await self._ask(name, shown, taint)
        if answer.approved:
            return answer, None
        if taint and answer.decision == ApprovalReason.NO_APPROVER.value:
            return refused, refusal(name, taint)
        if answer.status is ToolCallStatus.APPROVAL_TIMEOUT:
            return answer, f"error: nobody approved the tool {name!r} in time; it did not run"
        return answer, f"error: the user did not allow the tool {name!r} this time"

    async def _progress(self, calls: Sequence[RequestedCall], names: Mapping[str, str]) -> None:
        if self._on_progress is None:
            return
        try:
            await self._on_progress(progress_line(calls, names))
        except Exception:  # a status line must never cost the turn
            return

    def _arguments(self, call: RequestedCall) -> tuple[Any, str]:
        """The call's arguments (None when not JSON) and how they are shown (secrets masked)."""
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            return None, "<invalid>"
        shown = mask_arguments(arguments, self._secrets) if arguments is not None else "<invalid>"
        return arguments, shown

    async def _traced(
        self, call: RequestedCall, names: Mapping[str, str], step: int
    ) -> tuple[str, AgentError | None]:
        """`_call` in an `execute_tool` span, named as the model sees the tool."""
        with tracing.span(
            f"execute_tool {call.name}",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name=call.name,
            gen_ai__tool__call__id=call.id,
        ) as span:
            span.content("gen_ai.tool.call.arguments", arguments=call.arguments)
            text, error = await self._call(call, names, step)
            if error is not None:
                span.fail(error.reason.value)
            elif text.startswith("error:"):
                span.fail("tool_error")
            span.content("gen_ai.tool.call.result", result=text)
            return text, error

    async def _call(
        self, call: RequestedCall, names: Mapping[str, str], step: int
    ) -> tuple[str, AgentError | None]:
        """Run one call; its result text for the model and the error that ends the turn, if any."""
        name = names.get(call.name, call.name)
        started = self._clock()
        arguments, shown = self._arguments(call)

        answer: ApprovalAnswer | None = None
        taint: tuple[str, ...] = ()

        def record(status: ToolCallStatus, chars: int = 0, detail: str = "") -> None:
            known = call.name in names  # a made-up name must not become a metric label
            entry = ToolCallRecord(
                name if known else UNKNOWN_TOOL_NAME,
                shown,
                status,
                self._clock() - started,
                chars,
                step,
                detail if known else f"the model asked for {call.name[:80]!r}",
                answer.decision if answer is not None else "",
                answer.by if answer is not None else "",
                taint,
            )
            self.trail.append(entry)
            if self._on_event is not None:
                self._on_event(TOOL_CALL_EVENT, {"agent": self._agent, **entry.to_dict()})

        if call.name not in names:
            record(ToolCallStatus.UNKNOWN_TOOL)
            offered = ", ".join(sorted(names)) or "none"
            return f"error: there is no tool named {call.name!r}; tools: {offered}", None
        if not isinstance(arguments, dict):
            record(ToolCallStatus.BAD_ARGUMENTS)
            return "error: the arguments must be a JSON object", None
        approval, taint = self._approval(name)
        if approval is not Approval.AUTO:
            answer, refused = await self._permit(name, shown, approval, taint)
            if refused is not None:
                record(answer.status)
                return refused, None
            started = self._clock()  # the call's duration is the tool's own time
            if self._on_progress is not None:
                self._shown.append(asyncio.ensure_future(self._progress([call], names)))
        if self._on_event is not None:
            self._on_event(TOOL_STARTED_EVENT, {"agent": self._agent, "tool": name})
        timeout = self._config.tool_timeout_s
        try:
            async with asyncio.timeout(timeout):
                outcome = await self._source.call(name, arguments)
        except TimeoutError:
            record(ToolCallStatus.TIMEOUT, detail=f"no answer within {timeout:g} s")
            error = AgentError(FailureReason.TOOL_TIMEOUT, f"{name} exceeded {timeout:g} s")
            return "error: the tool timed out", error
        except Exception as exc:  # a source's own bug must not leave sibling calls running
            detail = str(exc) if isinstance(exc, ToolUnavailable) else type(exc).__name__
            record(ToolCallStatus.FAILED, detail=detail)
            return "error: the tool failed", AgentError(FailureReason.TOOL_FAILED, detail)
        # A tool that echoes its environment or quotes a URL with a token: masked before the
        # model, the transcript or the trail sees it.
        text = cap_text(masker_for(self._secrets).mask(outcome.text), self._config.max_result_chars)
        self._taints(name)
        status = ToolCallStatus.ERROR if outcome.is_error else ToolCallStatus.OK
        record(status, len(outcome.text))
        return text, None
