"""The configuration reference names every key of gateway.yaml: the key paths of the pydantic models
(channels through the registry's descriptors) against the keys written in the YAML blocks of
docs/configuration.md and the channel pages it sends the reader to."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

from chatgate.channels.registry import ChannelRegistry
from chatgate.config.channel_models import ChatChannelConfig
from chatgate.config.models import GatewayConfig
from tests.docs.manual import DOCS

REFERENCE_PAGES = [DOCS / "configuration.md", *sorted((DOCS / "channels").glob("*.md"))]
# Text overrides are keyed by text id: docs/texts.md lists every id (tests/texts/test_catalog.py).
SKIPPED = re.compile(r"(^|\.)texts\.")


def _strip(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _members(annotation: Any) -> list[Any]:
    annotation = _strip(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return [m for a in get_args(annotation) for m in _members(a)]
    return [annotation]


def _model(annotation: Any) -> type[BaseModel] | None:
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


def _key(name: str, field: Any) -> str:
    return str(field.alias or name)


def model_paths(annotation: Any, prefix: str, out: set[str], seen: frozenset[Any]) -> None:
    """Every key path a model allows; `*` stands for a name the user picks, `[]` for an item."""
    for member in _members(annotation):
        origin = get_origin(member)
        if origin is dict:
            model_paths(get_args(member)[1], f"{prefix}.*", out, seen)
        elif origin in (list, tuple, set, frozenset):
            model_paths(get_args(member)[0], f"{prefix}[]", out, seen)
        elif (model := _model(member)) is not None and model not in seen:
            for name, field in model.model_fields.items():
                path = f"{prefix}.{_key(name, field)}".lstrip(".")
                out.add(path)
                model_paths(field.annotation, path, out, seen | {model})


def data_paths(annotation: Any, data: Any, prefix: str, out: set[str]) -> None:
    """The key paths a parsed YAML value writes, read through the model it is checked against."""
    for member in _members(annotation):
        origin = get_origin(member)
        if origin is dict and isinstance(data, dict):
            for value in data.values():
                data_paths(get_args(member)[1], value, f"{prefix}.*", out)
        elif origin in (list, tuple, set, frozenset) and isinstance(data, list):
            for item in data:
                data_paths(get_args(member)[0], item, f"{prefix}[]", out)
        elif (model := _model(member)) is not None and isinstance(data, dict):
            fields = {_key(n, f): f for n, f in model.model_fields.items()}
            fields |= {n: f for n, f in model.model_fields.items()}
            keys = {k: k.removesuffix("_file") if k not in fields else k for k in data}
            if not set(keys.values()) <= set(fields):
                continue  # another member of the union
            for written, value in data.items():
                key = keys[written]
                path = f"{prefix}.{_key(key, fields[key])}".lstrip(".")
                out.add(path)
                data_paths(fields[key].annotation, value, path, out)


def _channels() -> dict[str, type[BaseModel]]:
    return dict(ChannelRegistry(plugins=False).config_models())


SHARED = set(ChatChannelConfig.model_fields)


def _shared(paths: set[str]) -> set[str]:
    """Keys every chat channel shares are documented once, as `channels.<chat>.KEY`."""
    chats = {n for n, m in _channels().items() if issubclass(m, ChatChannelConfig)}

    def one(path: str) -> str:
        parts = path.split(".")
        if len(parts) > 2 and parts[0] == "channels" and parts[1] in chats and parts[2] in SHARED:
            return ".".join(["channels", "<chat>", *parts[2:]])
        return path

    return {one(p) for p in paths}


def every_key() -> set[str]:
    out: set[str] = set()
    model_paths(GatewayConfig, "", out, frozenset())
    out.add("channels")
    for name, model in _channels().items():
        out.add(f"channels.{name}")
        model_paths(model, f"channels.{name}", out, frozenset())
    return _shared({p for p in out if not SKIPPED.search(p)})


def documented_keys(pages: list[Path]) -> set[str]:
    out: set[str] = set()
    channels = _channels()
    for page in pages:
        for block in re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            data = yaml.safe_load(block) or {}
            data_paths(GatewayConfig, {k: v for k, v in data.items() if k != "channels"}, "", out)
            for name, section in (data.get("channels") or {}).items():
                out |= {"channels", f"channels.{name}"}
                if name in channels:
                    data_paths(channels[name], section, f"channels.{name}", out)
    return _shared(out)


def test_the_reference_names_every_key() -> None:
    assert sorted(every_key() - documented_keys(REFERENCE_PAGES)) == []


def test_the_walk_sees_nested_and_named_keys() -> None:
    keys = every_key()
    assert {"gateway.http.port", "agents.*.tools.max_steps", "schedules.*.deliver"} <= keys
    assert {"channels.whatsapp.api_base", "channels.webhook.routes.*.signature"} <= keys
    assert {"channels.<chat>.dm_policy", "channels.discord.ca"} <= keys


def test_a_key_left_out_of_the_reference_is_found(tmp_path: Path) -> None:
    page = tmp_path / "configuration.md"
    page.write_text("```yaml\ngateway:\n  http: {port: 8765}\n```\n", encoding="utf-8")
    found = documented_keys([page])
    assert {"gateway", "gateway.http", "gateway.http.port"} <= found
    assert "gateway.http.host" not in found
