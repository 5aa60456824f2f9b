"""Parse YAML into plain Python while remembering the line of every key and list item."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

import yaml

from chatgate.config.errors import ConfigError, ConfigIssue, KeyPath


@dataclass
class YamlSource:
    """Parsed document plus a key-path → 1-based line map for error messages."""

    data: Any
    file: str
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int | None:
        """Line of the deepest known prefix of ``path`` (an unknown leaf points at its parent)."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None

    def issue(self, path: KeyPath, message: str) -> ConfigIssue:
        return ConfigIssue(path=path, message=message, file=self.file, line=self.line_of(path))


def parse_yaml(text: str, file: str) -> YamlSource:
    """Parse one YAML document; duplicate keys and syntax errors become ConfigErrors with lines."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        src = YamlSource(data=None, file=file)
        src.data = {} if node is None else _convert(loader, node, (), src, {})
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        raise ConfigError([ConfigIssue((), f"YAML syntax error: {problem}", file, line)]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([ConfigIssue((), f"YAML error: {exc}", file)]) from None
    finally:
        loader.dispose()
    return src


def _convert(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: KeyPath,
    src: YamlSource,
    own_by_node: dict[int, frozenset[int]],
) -> Any:
    """Build plain data; ``own_by_node`` remembers each mapping's own keys across alias visits."""
    if isinstance(node, yaml.MappingNode):
        own = own_by_node.setdefault(id(node), frozenset(id(k) for k, _ in node.value))
        loader.flatten_mapping(node)  # resolves `<<` merge keys; merged entries come first
        out: dict[Any, Any] = {}
        own_keys: set[Any] = set()
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int):
                raise ConfigError(
                    [src.issue(path, f"unsupported key {key!r}: keys must be strings")]
                )
            key_path = (*path, str(key)) if not isinstance(key, int) else (*path, key)
            if id(key_node) in own:
                if key in own_keys:
                    _duplicate(key_node, key_path, src)
                own_keys.add(key)
            src.lines[key_path] = key_node.start_mark.line + 1
            out[key] = _convert(loader, value_node, key_path, src, own_by_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            src.lines[(*path, index)] = item.start_mark.line + 1
            items.append(_convert(loader, item, (*path, index), src, own_by_node))
        return items
    return loader.construct_object(node, deep=True)


def _duplicate(key_node: yaml.Node, key_path: KeyPath, src: YamlSource) -> NoReturn:
    """A key written twice in one mapping is an error; overriding a `<<` merged key is not."""
    line = key_node.start_mark.line + 1
    message = "duplicate key (the first value would be lost)"
    raise ConfigError([ConfigIssue(key_path, message, src.file, line)])
