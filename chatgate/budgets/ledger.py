"""Prices, estimates and the accounting of settled model calls (metrics, running averages).

A model's price is the agent's `price:` when set, else litellm's cost map (read without importing
litellm); an estimate is the agent's running average cost per model call, or (no history yet) the
price of the prompt tokens litellm counts (litellm imported then, on first need) with no output.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from chatgate.agents.litellm_import import litellm_module
from chatgate.budgets.store import BudgetStore, CallAverage
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.cost_map import load_cost_map, map_price
from chatgate.config.models import GatewayConfig
from chatgate.feature.ports import LiveConfig
from chatgate.policies.budgets import NANO, Price

log = logging.getLogger("chatgate.budgets")
CHARS_PER_TOKEN = 4  # the prompt estimate when litellm cannot count a model's tokens


def rough_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    chars = sum(len(json.dumps(m.get("content") or "", default=str)) for m in messages)
    return max(1, chars // CHARS_PER_TOKEN)


async def prompt_tokens(model: str, messages: Sequence[Mapping[str, Any]]) -> int:
    """The request's prompt tokens as litellm counts them for ``model`` (its tokenizer: CPU,
    so only an agent's first calls, before it has history, pay it; on a thread). An image
    counts litellm's default, never fetched."""
    litellm = await litellm_module()

    def count() -> int:
        return int(
            litellm.token_counter(
                model=model, messages=list(messages), use_default_image_token_count=True
            )
        )

    try:
        return max(1, await asyncio.to_thread(count))
    except Exception as exc:  # a content shape the counter does not know
        log.debug("prompt tokens estimated from characters", extra={"error": type(exc).__name__})
        return rough_tokens(messages)


def price_of(config: GatewayConfig, agent: str, model: str) -> Price | None:
    """``agent``'s `price:`, else the cost map's price of ``model`` (``load_cost_map`` first)."""
    own = own_price(config, agent)
    if own is not None:
        return own
    listed = map_price(model)
    if listed is None:
        return None
    per_in, per_out = listed
    return Price(per_in * 1e6, per_out * 1e6)


def own_price(config: GatewayConfig, agent: str) -> Price | None:
    cfg = config.agents.get(agent)
    if isinstance(cfg, LiteLLMAgentConfig) and cfg.price is not None:
        return Price(cfg.price.input_per_mtok, cfg.price.output_per_mtok)
    return None


class Ledger:
    """The per-process side of accounting: averages cached from the store, metrics."""

    def __init__(self, live: LiveConfig, store: BudgetStore, registry: CollectorRegistry) -> None:
        self.live = live
        self.store = store
        self._averages: dict[str, CallAverage] = {}
        self.tokens = Counter(
            "chatgate_tokens",
            "Model tokens by agent, model and direction (input, output)",
            ["agent", "model", "direction"],
            registry=registry,
        )
        self.cost = Counter(
            "chatgate_cost_usd",
            "Model cost in USD by agent and model (the agent's price or litellm's cost map)",
            ["agent", "model"],
            registry=registry,
        )
        self.refusals = Counter(
            "chatgate_budget_refusals",
            "Turns and model calls refused by a spend budget, by rule",
            ["rule"],
            registry=registry,
        )

    async def cost_nano(self, agent: str, model: str, tokens_in: int, tokens_out: int) -> int:
        config = self.live.loaded.config
        if own_price(config, agent) is None:
            await load_cost_map()  # the first call parses the map's file, on a thread
        price = price_of(config, agent, model)
        return price.cost_nano(tokens_in, tokens_out) if price is not None else 0

    async def estimate(
        self, agent: str, model: str, messages: Sequence[Mapping[str, Any]]
    ) -> tuple[int, int]:
        """(nano-USD, tokens) one model call of ``agent`` is expected to cost."""
        average = self._averages.get(agent)
        if average is None:
            average = self._averages[agent] = await self.store.average(agent)
        per_call = average.per_call()
        if per_call is not None:
            return per_call
        tokens = await prompt_tokens(model, messages)
        return await self.cost_nano(agent, model, tokens, 0), tokens

    def known_estimate(self, agent: str) -> tuple[int, int] | None:
        """The estimate when this process already knows ``agent``'s running average (no store
        read, no prompt to count): what a turn reserves ahead of its first model call."""
        average = self._averages.get(agent)
        return average.per_call() if average is not None else None

    def charged(
        self,
        agent: str,
        model: str,
        tokens_in: int,
        tokens_out: int,
        nano: int,
        *,
        average: bool = True,
    ) -> None:
        """A settled call: metrics and (a chat call that reported usage, as the store keeps it)
        this process's running average."""
        self.tokens.labels(agent=agent, model=model, direction="input").inc(tokens_in)
        self.tokens.labels(agent=agent, model=model, direction="output").inc(tokens_out)
        self.cost.labels(agent=agent, model=model).inc(nano / NANO)
        if not average or tokens_in + tokens_out <= 0:
            return
        seen = self._averages.get(agent, CallAverage())
        self._averages[agent] = CallAverage(
            seen.calls + 1, seen.nano + nano, seen.tokens + tokens_in + tokens_out
        )
