"""Routing: which agent serves a conversation, and which session a message belongs to.

Pure functions over the few message fields routing reads (any object with those attributes,
e.g. an InboundMessage) and the operator's route bindings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from chatgate.model.messages import ChatKind


class RouteFacts(Protocol):
    @property
    def channel(self) -> str: ...
    @property
    def chat_id(self) -> str: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def sender_id(self) -> str: ...
    @property
    def chat_kind(self) -> ChatKind: ...


@dataclass(frozen=True, slots=True)
class Binding:
    """`routes:` entry: every field that is set must match; the first matching binding wins."""

    agent: str
    channel: str | None = None
    chat_id: str | None = None
    thread_id: str | None = None
    sender_id: str | None = None
    chat_kind: ChatKind | None = None

    def matches(self, facts: RouteFacts) -> bool:
        return (
            (self.channel is None or self.channel == facts.channel)
            and (self.chat_id is None or self.chat_id == facts.chat_id)
            and (self.thread_id is None or self.thread_id == facts.thread_id)
            and (self.sender_id is None or self.sender_id == facts.sender_id)
            and (self.chat_kind is None or self.chat_kind == facts.chat_kind)
        )


def resolve_agent(
    facts: RouteFacts,
    bindings: Sequence[Binding],
    channel_default: str,
    route_agent: str | None = None,
) -> str:
    """A configured ingress route's own agent wins; then the first matching binding; then the
    channel's agent."""
    if route_agent:
        return route_agent
    for binding in bindings:
        if binding.matches(facts):
            return binding.agent
    return channel_default


def session_key(agent: str, facts: RouteFacts, *, per_user_in_groups: bool) -> str:
    """agent:channel:chat[:thread][:u<sender>] — one conversation, one transcript."""
    key = f"{agent}:{facts.channel}:{facts.chat_id}"
    if facts.thread_id:
        key += f":{facts.thread_id}"
    if per_user_in_groups and facts.chat_kind != "direct":
        key += f":u{facts.sender_id}"
    return key


def route(
    facts: RouteFacts,
    bindings: Sequence[Binding],
    channel_default: str,
    route_agent: str | None,
    *,
    per_user_in_groups: bool,
) -> tuple[str, str]:
    """(agent, session key) of a message: `resolve_agent`, then `session_key`."""
    agent = resolve_agent(facts, bindings, channel_default, route_agent)
    return agent, session_key(agent, facts, per_user_in_groups=per_user_in_groups)
