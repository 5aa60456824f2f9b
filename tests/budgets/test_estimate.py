"""The first estimate of an agent without history: the price of the prompt's tokens as
litellm counts them, with no output; once a call has settled, its running average instead."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from prometheus_client import CollectorRegistry

from chatgate.agents.litellm_import import import_litellm
from chatgate.budgets.ledger import Ledger
from chatgate.budgets.store import Spent, SqliteBudgetStore
from tests.harness import load, write_config

MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "hello " * 120},
]


async def test_no_history_prices_the_counted_prompt_then_the_average(tmp_path: Path) -> None:
    loaded = load(
        write_config(
            tmp_path,
            """
agents:
  default:
    backend: litellm
    model: openai/gpt-4o-mini
    api_key: sk-test
    price: {input_per_mtok: 2, output_per_mtok: 8}
channels:
  memory: {dm_policy: open}
""",
        )
    )
    store = SqliteBudgetStore(tmp_path / "budgets.db")
    await store.open()
    try:
        ledger = Ledger(SimpleNamespace(loaded=loaded), store, CollectorRegistry())
        first = await ledger.estimate("default", "openai/gpt-4o-mini", MESSAGES)
        await store.settle("t", [], Spent(5000, 40, 1), "default")
        ledger.charged("default", "openai/gpt-4o-mini", 30, 10, 5000)
        later = await ledger.estimate("default", "openai/gpt-4o-mini", MESSAGES)
    finally:
        await store.close()
    counted = import_litellm().token_counter(model="openai/gpt-4o-mini", messages=MESSAGES)
    assert first == (counted * 2 * 1000, counted)  # 2 USD per Mtok in, nothing out
    assert later == (5000, 40)  # the running average per call
