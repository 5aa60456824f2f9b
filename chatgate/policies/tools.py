"""Tool decisions: which tools an agent may use, when the tool loop must stop, what a trail shows.

Pure functions over plain values; the loop in ``agents/tools`` and the config check call them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any

from chatgate.model.reasons import FailureReason

MASK = "***"
# Argument names whose values are never shown (logs, journal, `chatgate why`).
_SECRET_KEY = re.compile(
    r"(pass(word|wd)?|secret|token|api[_-]?key|auth(orization)?|credential|cookie|private[_-]?key)",
    re.IGNORECASE,
)
_WIRE_BAD = re.compile(r"[^A-Za-z0-9_-]")
WIRE_MAX = 64  # OpenAI-style function names: ^[A-Za-z0-9_-]{1,64}$
# litellm providers that pass tool definitions to the model natively (not a prompt emulation).
NATIVE_TOOL_PROVIDERS = frozenset(
    {
        "openai",
        "azure",
        "azure_ai",
        "anthropic",
        "bedrock",
        "gemini",
        "vertex_ai",
        "groq",
        "mistral",
        "openrouter",
        "deepseek",
        "together_ai",
        "fireworks_ai",
        "xai",
        "cohere_chat",
        "ollama_chat",
        "hosted_vllm",
        "lm_studio",
        "cerebras",
        "databricks",
        "watsonx",
        "nvidia_nim",
        "perplexity",
        "sambanova",
    }
)


class Approval(StrEnum):
    """What happens when the model asks for a tool."""

    AUTO = "auto"  # run it
    ASK = "ask"  # ask the session's user (or the configured approver) in the chat first
    DENY = "deny"  # refuse; the model is told the call was denied


def tool_allowed(name: str, allow: Sequence[str], deny: Sequence[str]) -> bool:
    """Whether ``name`` (``server.tool``) passes an agent's allow globs and none of its deny globs.

    An empty allow list allows nothing: tools are opt-in per agent.
    """
    if any(fnmatchcase(name, pattern) for pattern in deny):
        return False
    return any(fnmatchcase(name, pattern) for pattern in allow)


def approval_for(name: str, rules: Iterable[tuple[str, Approval]]) -> Approval:
    """The approval of the first rule whose glob matches ``name``; ``auto`` when none does."""
    for pattern, approval in rules:
        if fnmatchcase(name, pattern):
            return approval
    return Approval.AUTO


@dataclass(frozen=True)
class ToolLimits:
    """Bounds of one turn's tool loop (``None``: that budget is off)."""

    max_steps: int
    budget_tokens: int | None = None
    budget_s: float | None = None


@dataclass(frozen=True)
class LoopUsage:
    """What the loop has spent so far: model calls that asked for tools, tokens, seconds."""

    tool_steps: int
    tokens: int
    elapsed_s: float


def stop_reason(usage: LoopUsage, limits: ToolLimits) -> FailureReason | None:
    """Why the loop may not run another round of tool calls, or ``None`` to go on."""
    if limits.budget_tokens is not None and usage.tokens >= limits.budget_tokens:
        return FailureReason.TOOL_BUDGET
    if limits.budget_s is not None and usage.elapsed_s >= limits.budget_s:
        return FailureReason.TOOL_BUDGET
    if usage.tool_steps >= limits.max_steps:
        return FailureReason.TOOL_LIMIT
    return None


def native_tool_calls(provider: str) -> bool:
    """Whether litellm sends tools natively to ``provider`` (checked at config load)."""
    return provider in NATIVE_TOOL_PROVIDERS


def wire_name(name: str, taken: Iterable[str] = ()) -> str:
    """The function name the model sees for ``name``: dots become ``__``, at most 64 chars,
    made unique against ``taken`` with a numeric suffix."""
    base = _WIRE_BAD.sub("_", name.replace(".", "__"))[:WIRE_MAX] or "tool"
    used = set(taken)
    candidate, n = base, 1
    while candidate in used:
        n += 1
        suffix = f"_{n}"
        candidate = base[: WIRE_MAX - len(suffix)] + suffix
    return candidate


def mask_arguments(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` with secret-named keys and known secret texts masked, for logs and the trail."""
    texts = tuple(s for s in secrets if len(s) >= 4)
    return _mask(value, texts)


def _mask(value: Any, texts: tuple[str, ...]) -> Any:
    if isinstance(value, Mapping):
        return {
            str(k): MASK if _SECRET_KEY.search(str(k)) else _mask(v, texts)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_mask(v, texts) for v in value]
    if isinstance(value, str):
        for text in texts:
            value = value.replace(text, MASK)
        return value
    return value


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a visible marker (tool results are untrusted)."""
    if len(text) <= limit:
        return text
    marker = f"\n[truncated: {len(text) - limit} more characters]"
    return text[: max(0, limit - len(marker))] + marker
