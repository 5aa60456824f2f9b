"""Parse YAML into plain Python while remembering the line of every key and list item."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

import yaml

from chatgate.config.errors import ConfigError, ConfigIssue, KeyPath

MAX_DEPTH = 64
MAX_NODES = 100_000
MAX_INT_BITS = 256  # far past any setting; hex/octal forms escape int()'s digit limit
_STD = "tag:yaml.org,2002:"
# The tags a config value may carry (implicitly, or written out as `!!int 5`); others are refused.
SCALAR_TAGS = frozenset(f"{_STD}{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))
MAP_TAG = f"{_STD}map"
SEQ_TAG = f"{_STD}seq"


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
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        raise ConfigError([_reader_issue(exc, text, file)]) from None
    try:
        node = loader.get_single_node()
        src = YamlSource(data=None, file=file)
        budget = _Budget()
        src.data = {} if node is None else _convert(loader, node, (), src, {}, budget)
    except yaml.reader.ReaderError as exc:
        raise ConfigError([_reader_issue(exc, text, file)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        raise ConfigError([ConfigIssue((), f"YAML syntax error: {problem}", file, line)]) from None
    except yaml.YAMLError:
        raise ConfigError(
            [ConfigIssue((), "YAML error: the file cannot be parsed", file)]
        ) from None
    except RecursionError:
        message = f"nested deeper than {MAX_DEPTH} levels, or a recursive alias"
        line = int(getattr(loader, "line", 0)) + 1  # where the reader stopped
        raise ConfigError([ConfigIssue((), message, file, line)]) from None
    finally:
        loader.dispose()
    return src


def _reader_issue(exc: yaml.reader.ReaderError, text: str, file: str) -> ConfigIssue:
    """A character YAML does not allow (NUL, most control characters), with its line."""
    line = text[: max(exc.position, 0)].count("\n") + 1
    return ConfigIssue((), f"character {exc.character!r} is not allowed in YAML", file, line)


@dataclass
class _Budget:
    """How many nodes alias expansion may still produce (an alias bomb grows ×N per level)."""

    left: int = MAX_NODES


def _node_line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _shown_tag(tag: str) -> str:
    return f"!!{tag.removeprefix(_STD)}" if tag.startswith(_STD) else tag


def _check_tag(node: yaml.Node, path: KeyPath, src: YamlSource) -> None:
    """A tag the config cannot use (`!!binary`, `!!set`, a local `!tag`), or one that does not
    fit its node (`!!str [1]`, `!!seq x`), is an issue naming the key and line."""
    tag = str(node.tag)
    if isinstance(node, yaml.MappingNode):
        fits, kind = tag == MAP_TAG, "a mapping"
    elif isinstance(node, yaml.SequenceNode):
        fits, kind = tag == SEQ_TAG, "a list"
    else:
        fits, kind = tag in SCALAR_TAGS, "a single value"
    if fits:
        return
    if tag in SCALAR_TAGS or tag in (MAP_TAG, SEQ_TAG):
        message = f"the tag {_shown_tag(tag)} does not fit {kind}"
    elif tag == f"{_STD}value":  # YAML reads a bare `=` as this tag
        message = 'a bare "=" is not a value: put it in quotes'
    else:
        message = (
            f"unsupported YAML tag {_shown_tag(tag)} (use !!str, !!int, !!float, !!bool or none)"
        )
    raise ConfigError([ConfigIssue(path, message, src.file, _node_line(node))])


def _scalar(loader: yaml.SafeLoader, node: yaml.Node, path: KeyPath, src: YamlSource) -> Any:
    """Construct one scalar; a value its tag cannot hold (`2001-13-45`, `!!bool maybe`) is an
    issue (a constructor given such a value may raise anything: KeyError, AttributeError…)."""
    _check_tag(node, path, src)
    try:
        value = loader.construct_object(node, deep=True)
    except Exception:
        tag = str(node.tag).rsplit(":", 1)[-1]
        raise ConfigError(
            [ConfigIssue(path, f"not a valid {tag} value", src.file, _node_line(node))]
        ) from None
    if isinstance(value, str) and not _is_text(value):
        message = "a \\u escape names a lone surrogate, which is not text"
        raise ConfigError([ConfigIssue(path, message, src.file, _node_line(node))])
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        message = "integer too large"
        raise ConfigError([ConfigIssue(path, message, src.file, _node_line(node))])
    return value


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _convert(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: KeyPath,
    src: YamlSource,
    own_by_node: dict[int, frozenset[int]],
    budget: _Budget,
    ancestors: frozenset[int] = frozenset(),
) -> Any:
    """Build plain data; ``own_by_node`` remembers each mapping's own keys across alias visits.

    Bounded: a node that contains itself (recursive alias), nesting past MAX_DEPTH and alias
    expansion past MAX_NODES are config errors, never a RecursionError or a long stall.
    """
    budget.left -= 1
    if budget.left < 0:
        message = f"aliases expand to more than {MAX_NODES} values (an alias bomb?)"
        raise ConfigError([ConfigIssue(path, message, src.file, _node_line(node))])
    if len(path) > MAX_DEPTH:
        message = f"nested deeper than {MAX_DEPTH} levels"
        raise ConfigError([ConfigIssue(path[:MAX_DEPTH], message, src.file, _node_line(node))])
    if id(node) in ancestors:
        message = "recursive alias (a value contains itself)"
        raise ConfigError([ConfigIssue(path, message, src.file, _node_line(node))])
    inner = ancestors | {id(node)}
    if not isinstance(node, yaml.ScalarNode):
        _check_tag(node, path, src)
    if isinstance(node, yaml.MappingNode):
        own = own_by_node.setdefault(id(node), frozenset(id(k) for k, _ in node.value))
        loader.flatten_mapping(node)  # resolves `<<` merge keys; merged entries come first
        out: dict[Any, Any] = {}
        own_keys: set[Any] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError([src.issue(path, "unsupported key: keys must be strings")])
            key = _scalar(loader, key_node, path, src)
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
            out[key] = _convert(loader, value_node, key_path, src, own_by_node, budget, inner)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            src.lines[(*path, index)] = item.start_mark.line + 1
            items.append(_convert(loader, item, (*path, index), src, own_by_node, budget, inner))
        return items
    return _scalar(loader, node, path, src)


def _duplicate(key_node: yaml.Node, key_path: KeyPath, src: YamlSource) -> NoReturn:
    """A key written twice in one mapping is an error; overriding a `<<` merged key is not."""
    line = key_node.start_mark.line + 1
    message = "duplicate key (the first value would be lost)"
    raise ConfigError([ConfigIssue(key_path, message, src.file, line)])
