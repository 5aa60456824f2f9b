"""The config file as text the browser may see and send back: clear secrets masked on the way
out and restored on the way in by swapping only their tokens (ruamel's composer says where each
value stands), so comments, key order, quoting and blank lines survive byte for byte; plus the
diff against the file and a change summary that names keys only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from chatgate.config.errors import ConfigError, ConfigIssue, KeyPath, format_path
from chatgate.config.masking import REDACTED
from chatgate.config.source import parse_yaml
from chatgate.config_edit.secrets import is_clear

MAX_LISTED = 50  # changed keys named in a summary; the rest are counted


@dataclass(frozen=True)
class _Scalar:
    value: str
    start: int
    end: int  # the token's end, without the whitespace or line breaks after it


def scalars(text: str, file: str) -> dict[KeyPath, _Scalar]:
    """Every scalar value of the document by key path, with where its token stands in ``text``
    (ruamel's composer marks), so a value can be swapped without touching any other byte."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

    parse_yaml(text, file)  # the loader's own errors (with their lines) come first
    try:
        root = YAML(typ="rt").compose(text)
    except YAMLError:
        raise ConfigError(
            [ConfigIssue((), "YAML error: the text cannot be parsed", file)]
        ) from None
    found: dict[KeyPath, _Scalar] = {}
    stack: list[tuple[KeyPath, Node | None]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, MappingNode):
            stack.extend(((*path, key.value), value) for key, value in node.value)
        elif isinstance(node, SequenceNode):
            stack.extend(((*path, index), item) for index, item in enumerate(node.value))
        elif isinstance(node, ScalarNode):
            start, end = node.start_mark.index, node.end_mark.index
            token = text[start:end].rstrip()
            found[path] = _Scalar(str(node.value), start, start + len(token))
    return found


def _spliced(text: str, swaps: dict[tuple[int, int], str]) -> str:
    out, at_ = [], 0
    for (start, end), token in sorted(swaps.items()):
        out += [text[at_:start], token]
        at_ = end
    return "".join([*out, text[at_:]])


def mask(text: str, paths: list[KeyPath], file: str = "config") -> str:
    """``text`` with the values at ``paths`` replaced by the quoted mask, every other byte
    (comments, order, quoting, blank lines) as it was."""
    if not paths:
        return text
    found = scalars(text, file)
    masked = f"'{REDACTED}'"
    return _spliced(text, {(s.start, s.end): masked for p in paths if (s := found.get(p))})


def unmask(edited: str, on_disk: str, file: str, hide: Callable[[str], str]) -> str:
    """``edited`` with each masked value put back as the file on disk writes it at that key (a
    whole mask, or the text ``hide`` makes of the value); a mask where the file has nothing it
    could stand for is an error naming the key and line."""
    if REDACTED not in edited:
        return edited
    lines = parse_yaml(edited, file)
    try:
        disk = scalars(on_disk, file)
        none_here = "the file on disk has none here"
    except ConfigError:
        disk, none_here = {}, "the file on disk does not parse, so it cannot be put back"
    swaps: dict[tuple[int, int], str] = {}
    issues: list[ConfigIssue] = []
    for path, shown in scalars(edited, file).items():
        if REDACTED not in shown.value:
            continue
        kept = disk.get(path)
        whole = kept is not None and shown.value == REDACTED and is_clear(kept.value)
        if kept is not None and (whole or hide(kept.value) == shown.value):
            swaps[(shown.start, shown.end)] = on_disk[kept.start : kept.end]
        else:
            message = (
                f"'{REDACTED}' stands for a hidden value, but {none_here}; "
                f"give a ${{VAR}} reference or {path[-1] if path else 'the key'}_file"
            )
            issues.append(lines.issue(path, message))
    if issues:
        raise ConfigError(issues)
    return _spliced(edited, swaps)


def diff(before: str, after: str, *, label: str) -> str:
    """A unified diff of two (masked) texts."""
    import difflib  # when a config edit is shown, not at start

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{label} (on disk)",
        tofile=f"{label} (edited)",
        n=2,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def leaves(data: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from leaves(value, (*path, key))
    elif isinstance(data, list) and data:
        for index, value in enumerate(data):
            yield from leaves(value, (*path, index))
    else:
        yield path, data


@dataclass(frozen=True)
class Summary:
    """What a change did, without any value: the keys and the line counts."""

    changed: tuple[str, ...]
    more: int  # changed keys past MAX_LISTED
    added_lines: int
    removed_lines: int

    def keys(self) -> tuple[str, ...]:
        return self.changed + ((f"… and {self.more} more",) if self.more else ())


def summary(before: str, after: str) -> Summary:
    """The key paths whose value was added, removed or changed (no values), and line counts."""
    old = dict(leaves(_parsed(before)))
    new = dict(leaves(_parsed(after)))
    changed = sorted(
        {format_path(p) for p in old.keys() ^ new.keys()}
        | {format_path(p) for p in old.keys() & new.keys() if old[p] != new[p]}
    )
    added = removed = 0
    import difflib

    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0):
        if not line.startswith(("+++", "---")):
            added += line.startswith("+")
            removed += line.startswith("-")
    return Summary(tuple(changed[:MAX_LISTED]), max(0, len(changed) - MAX_LISTED), added, removed)


def _parsed(text: str) -> Any:
    try:
        return parse_yaml(text, "config").data
    except ConfigError:
        return {}
