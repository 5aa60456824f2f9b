"""Cross-checks of `budgets:`: the agents a rule names exist, and every model that can run
under a cost limit (fallbacks, `degrade_to`, image descriptions, transcription and spoken
replies included) has a price, from `price:` or from litellm's cost map (``cost_map``)."""

from __future__ import annotations

from collections.abc import Callable

from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.cost_map import map_price, media_priced
from chatgate.config.errors import ConfigIssue, KeyPath
from chatgate.config.media_models import TranscriptionConfig
from chatgate.config.models import GatewayConfig
from chatgate.config.source import YamlSource


def budget_issues(config: GatewayConfig, src: YamlSource) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    agents = config.agents
    names: set[str] = set()
    for index, rule in enumerate(config.budgets):
        base: KeyPath = ("budgets", index)
        if rule.name in names:
            issues.append(src.issue((*base, "name"), f"budget name '{rule.name}' is used twice"))
        names.add(rule.name)
        for i, agent in enumerate(rule.agents):
            if agent not in agents:
                issues.append(src.issue((*base, "agents", i), f"unknown agent '{agent}'"))
        if rule.degrade_to is not None and rule.degrade_to not in agents:
            listed = ", ".join(sorted(agents))
            issues.append(
                src.issue(
                    (*base, "degrade_to"), f"unknown agent '{rule.degrade_to}' (agents: {listed})"
                )
            )
    issues += _price_issues(config, src)
    return issues


def _price_issues(config: GatewayConfig, src: YamlSource) -> list[ConfigIssue]:
    """A model without a price is refused when a cost limit could apply to its agent."""
    costed = [r for r in config.budgets if r.limit_usd is not None]
    if not costed:
        return []
    degrade = {r.degrade_to for r in config.budgets if r.degrade_to}
    issues: list[ConfigIssue] = []
    for name, agent in config.agents.items():
        if not isinstance(agent, LiteLLMAgentConfig) or agent.price is not None:
            continue
        if name not in degrade and not any(not r.agents or name in r.agents for r in costed):
            continue
        for key, model, priced in _models(agent):
            if not priced(model):
                issues.append(
                    src.issue(
                        ("agents", name, *key),
                        f"model '{model}' has no known price and a cost budget (limit_usd) can "
                        f"apply to agent '{name}'; set agents.{name}.price "
                        "{input_per_mtok: …, output_per_mtok: …}",
                    )
                )
    return issues


def _chat_priced(model: str) -> bool:
    return map_price(model) is not None


def _models(agent: LiteLLMAgentConfig) -> list[tuple[KeyPath, str, Callable[[str], bool]]]:
    """Every model the agent may call (its own, fallbacks, and the media step's: image
    descriptions, transcription, spoken replies), with its key path and how its price is found."""
    found: list[tuple[KeyPath, str, Callable[[str], bool]]] = [
        (("model",), agent.model, _chat_priced)
    ]
    found += [
        (("fallbacks", i, "model"), f.model, _chat_priced) for i, f in enumerate(agent.fallbacks)
    ]
    media = agent.media
    if media.enabled and media.vision_model:
        found.append((("media", "vision_model"), media.vision_model, _chat_priced))
    if media.enabled and media.transcription is not None:
        found.append((("media", "transcription", "model"), media.transcription.model, media_priced))
    elif media.enabled:  # the default transcriber
        found.append((("media",), TranscriptionConfig().model, media_priced))
    if agent.voice_reply != "never" and agent.voice_model:
        found.append((("voice_model",), agent.voice_model, media_priced))
    return found
