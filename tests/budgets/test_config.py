"""Budget config: a model without a price under a cost limit is refused by `config check` (exit
78 naming the key), unknown agents in rules are named, `price:` satisfies the check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chatgate.agents.litellm_import import import_litellm
from chatgate.config.cost_map import PRICE_FIELD, bundled_prices, cost_map, map_price
from chatgate.config.errors import EX_CONFIG, ConfigError
from tests.harness import load, write_config

AGENT = """
agents:
  default:
    backend: litellm
    model: openai/our-own-model
    api_key: sk-test
{price}budgets:
  - name: money
    scope: user
    limit_usd: 1.0
{extra}channels:
  memory: {{dm_policy: open}}
"""


def _config(tmp_path: Path, price: str = "", extra: str = "") -> Path:
    return write_config(tmp_path, AGENT.format(price=price, extra=extra))


def test_config_check_refuses_a_model_without_a_price(tmp_path: Path) -> None:
    path = _config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "chatgate", "config", "check", "-c", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == EX_CONFIG, done.stderr
    assert "agents.default.model" in done.stderr and "no known price" in done.stderr


def test_a_price_or_the_cost_map_satisfies_the_check(tmp_path: Path) -> None:
    load(_config(tmp_path, price="    price: {input_per_mtok: 1, output_per_mtok: 2}\n"))
    mapped = _config(tmp_path / "mapped").read_text().replace("our-own-model", "gpt-4o-mini")
    (tmp_path / "mapped" / "gateway.yaml").write_text(mapped)
    load(tmp_path / "mapped" / "gateway.yaml")


def test_prices_come_from_litellms_own_cost_map_once_it_is_imported() -> None:
    """Every settled call is priced: a second parsed copy of the map's file would hold ~11 MB."""
    litellm = import_litellm()
    assert cost_map() is litellm.model_cost
    entry = litellm.model_cost["gpt-4o-mini"]
    assert map_price("openai/gpt-4o-mini") == (
        entry["input_cost_per_token"],
        entry["output_cost_per_token"],
    )


def test_the_bundled_prices_are_litellms_own() -> None:
    """Read without importing litellm, the prices are litellm's: every price of every model."""
    litellm = import_litellm()
    bundled = bundled_prices()
    listed = {
        name: {k: v for k, v in entry.items() if PRICE_FIELD in k and type(v) in (int, float)}
        for name, entry in litellm.model_cost.items()
        if isinstance(entry, dict)
    }
    assert bundled == {name: prices for name, prices in listed.items() if prices}
    for model in ("gpt-4o-mini", "azure/gpt-astra-latest", "whisper-1", "tts-1"):  # an alias too
        assert bundled[model].items() <= litellm.model_cost[model].items()


def test_rules_name_known_agents(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        price="    price: {input_per_mtok: 1, output_per_mtok: 2}\n",
        extra="    degrade_to: nowhere\n",
    )
    with pytest.raises(ConfigError) as raised:
        load(path)
    assert "budgets[0].degrade_to" in str(raised.value) or "budgets.0.degrade_to" in str(
        raised.value
    )


MAPPED = AGENT.replace("openai/our-own-model", "gpt-4o-mini")


@pytest.mark.parametrize(
    ("lines", "key"),
    [
        (
            "    media: {transcription: {model: our-own-whisper}}\n",
            "agents.default.media.transcription.model",
        ),
        ("    voice_reply: always\n    voice_model: our-own-tts\n", "agents.default.voice_model"),
        ("    media: {vision_model: our-own-eyes}\n", "agents.default.media.vision_model"),
    ],
)
def test_media_models_need_a_price_under_a_cost_budget(
    tmp_path: Path, lines: str, key: str
) -> None:
    path = write_config(tmp_path, MAPPED.format(price=lines, extra=""))
    with pytest.raises(ConfigError) as raised:
        load(path)
    assert key in str(raised.value) and "no known price" in str(raised.value)


def test_mapped_media_models_pass(tmp_path: Path) -> None:
    lines = (
        "    media: {transcription: {model: whisper-1}}\n"
        "    voice_reply: always\n    voice_model: openai/tts-1\n"
    )
    load(write_config(tmp_path, MAPPED.format(price=lines, extra="")))
