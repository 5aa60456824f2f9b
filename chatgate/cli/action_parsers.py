"""argparse subcommands built from the operator actions' declarations: `chatgate GROUP VERB`
(or `chatgate GROUP` for an action without a verb), an argument per field of the action's
arguments dataclass. Only the catalog is imported here: parsers are built for every command."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chatgate.operator.actions import AnyAction, spec_of


def add_actions(
    sub: Any,
    actions: Iterable[AnyAction],
    group_help: Mapping[str, str],
    *parents: argparse.ArgumentParser,
    groups: Mapping[str, Any] | None = None,
) -> None:
    """A subcommand for every action that declares a `Command` (its verb joins ``groups``'
    subparsers when its group is one of them, e.g. `config` beside check/show/migrate)."""
    out = argparse.ArgumentParser(add_help=False)
    out.add_argument("--json", action="store_true", help="machine-readable output")
    groups = dict(groups or {})
    for action in actions:
        command = action.command
        if command is None:
            continue
        chosen = [*parents, out] if command.json_flag else list(parents)
        if command.verb is None:
            parser = sub.add_parser(command.group, parents=chosen, help=command.help)
        else:
            if command.group not in groups:
                group = sub.add_parser(command.group, help=group_help.get(command.group))
                groups[command.group] = group.add_subparsers(dest="action", required=True)
            help_text = command.help or None
            parser = groups[command.group].add_parser(command.verb, parents=chosen, help=help_text)
        add_fields(parser, action)


def add_fields(parser: argparse.ArgumentParser, action: AnyAction) -> None:
    for field in action.fields():
        spec = spec_of(field)
        convert = cli_type(action, field)
        if spec.cli == "positional":
            parser.add_argument(field.name, type=convert, help=spec.help or None)
        elif spec.cli == "optional_positional":
            parser.add_argument(field.name, nargs="?", type=convert, help=spec.help or None)
        else:
            flag = "--" + field.name.replace("_", "-")
            parser.add_argument(
                flag, dest=field.name, type=convert, default=field.default, help=spec.help or None
            )


def cli_type(action: AnyAction, field: dataclasses.Field[Any]) -> Callable[[str], Any]:
    """argparse's converter for a field: numbers within bounds (else a usage error, exit 2)."""
    if not action.is_number(field.name):
        return str
    spec = spec_of(field)

    def number(text: str) -> int:
        from chatgate.http_input import BadInput, bounded_int

        try:
            return bounded_int(text, field.name, low=spec.low, high=spec.high)
        except BadInput as bad:
            raise argparse.ArgumentTypeError(bad.message) from None

    return number


def chosen(actions: Iterable[AnyAction], args: argparse.Namespace) -> AnyAction | None:
    """The action the parsed command line names, if it names one."""
    for action in actions:
        command = action.command
        if command is None or command.group != args.command:
            continue
        if command.verb is None or command.verb == getattr(args, "action", None):
            return action
    return None
