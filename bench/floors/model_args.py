"""The model options every floor bot takes: `--mode llm` calls the (fake) model the way the
gateway's agent does, `--mode echo` answers without one."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=("llm", "echo"), default="llm")
    parser.add_argument("--llm-base", default=None)
    parser.add_argument("--model", default=None)
    parser.add_argument("--api-key", default=None)


def parse_with_model(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """``argv`` parsed; `--mode llm` without its model options is a usage error."""
    args = parser.parse_args(argv)
    if args.mode == "llm" and not (args.llm_base and args.model and args.api_key):
        parser.error("--mode llm needs --llm-base, --model and --api-key")
    return args
