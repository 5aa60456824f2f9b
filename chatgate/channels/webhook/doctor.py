"""`chatgate doctor` for webhook routes: each is signed with a non-empty secret."""

from __future__ import annotations

from chatgate.channels.webhook.config import WebhookChannelConfig
from chatgate.config.base import secret_value
from chatgate.config.findings import Finding, Level


async def check(name: str, config: WebhookChannelConfig, offline: bool) -> list[Finding]:
    out = []
    for route_name, route in config.routes.items():
        check_name = f"{name}.{route_name}.secret"
        if route.signature != "none" and secret_value(route.secret) is None:
            out.append(
                Finding(
                    check_name,
                    Level.WARN,
                    f"POST {route.path} answers 503 to every request: its secret is empty",
                    f"set channels.{name}.routes.{route_name}.secret (or secret_file)",
                )
            )
        elif route.signature == "none":
            out.append(
                Finding(check_name, Level.WARN, f"POST {route.path} accepts unsigned requests")
            )
        else:
            out.append(Finding(check_name, Level.OK, f"POST {route.path} ({route.signature})"))
    return out
