"""A vision description is a model call of the turn: admitted and charged by the turn's bill
(here the real `TurnBill` over the SQLite store), its tokens in the turn's totals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from prometheus_client import CollectorRegistry

from chatgate.budgets.ledger import Ledger
from chatgate.budgets.meter import Meters, TurnBill
from chatgate.budgets.rules import Rules
from chatgate.budgets.store import SqliteBudgetStore
from chatgate.clock import SystemClock
from chatgate.media.describe import Describer
from chatgate.media.prepare import prepare_attachments
from chatgate.model.messages import Attachment
from chatgate.policies.budgets import AGENT_DAY, Who
from tests.fakes.llm import FakeLLM
from tests.harness import fake_agent, load, write_config
from tests.media.samples import png
from tests.media.test_prepare import MemoryFiles, _ctx, _msg


async def test_a_vision_description_is_charged_to_the_turn(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    loaded = load(
        write_config(
            tmp_path,
            f"""
{fake_agent(fake_llm, "sk-test", 60)}
    price: {{input_per_mtok: 1, output_per_mtok: 1}}
budgets:
  - {{name: tokens, scope: user, limit_tokens: 1000000}}
channels:
  memory: {{dm_policy: open}}
""",
        )
    )
    live = SimpleNamespace(loaded=loaded)
    store = SqliteBudgetStore(tmp_path / "budgets.db")
    await store.open()
    try:
        ledger = Ledger(live, store, CollectorRegistry())
        none: Any = None
        meters = Meters(live, SystemClock(), store, ledger, Rules(live), none, none, none, none)
        msg = _msg(Attachment("image", handle="a", name="sign.png"), text="what is this")
        who = Who("tg:1", "tg:1", "default", "tg")
        bill = TurnBill(meters, "default", [], msg, who, none)
        fake_llm.script("A red square.")
        describer = Describer("openai/fake-vision", fake_llm.base_url, "sk-d", 10.0, bill)
        ctx = replace(_ctx(tmp_path), vision=False, describer=describer)
        await prepare_attachments([msg], MemoryFiles({"a": png()}), ctx)
        counters = await store.counters()
    finally:
        await store.close()
    summary = bill.summary()
    assert summary["calls"] == 1 and summary["model"] == "openai/fake-vision"
    assert summary["tokens_in"] > 0 and summary["cost_usd"] > 0
    [(key, usage)] = counters.items()
    assert key.startswith(f"{AGENT_DAY}|default|")
    assert usage.tokens == summary["tokens_in"] + summary["tokens_out"]
