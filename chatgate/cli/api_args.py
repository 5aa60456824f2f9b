"""Argument plumbing of the commands that talk to the daemon's /api (stdlib only: parsers are
built for every command line, so this must import fast)."""

from __future__ import annotations

import argparse
from typing import Any


def api_actions(
    sub: Any, name: str, what: str, *parents: argparse.ArgumentParser
) -> tuple[Any, list[argparse.ArgumentParser]]:
    """Subcommand `name` with required actions, and the parents each action takes: `parents`
    (config, --url) and `--json`."""
    out = argparse.ArgumentParser(add_help=False)
    out.add_argument("--json", action="store_true", help="machine-readable output")
    command = sub.add_parser(name, help=what)
    return command.add_subparsers(dest="action", required=True, metavar="ACTION"), [*parents, out]
