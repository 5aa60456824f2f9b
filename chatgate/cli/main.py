"""`chatgate` command-line entry point. Heavy modules load inside each command, not here."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from chatgate import __version__

if TYPE_CHECKING:
    from chatgate.config.loader import LoadedConfig


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chatgate", description="Chat-bot gateway daemon.")
    parser.add_argument("--version", action="version", version=f"chatgate {__version__}")
    config = argparse.ArgumentParser(add_help=False)
    config.add_argument(
        "--config", "-c", help="path to gateway.yaml (default: $CHATGATE_CONFIG or ./gateway.yaml)"
    )
    api = argparse.ArgumentParser(add_help=False)
    api.add_argument("--url", help="daemon base URL (default: from gateway.http)")
    out = argparse.ArgumentParser(add_help=False)
    out.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", parents=[config], help="run the daemon in the foreground")
    run.add_argument("--log-format", choices=["text", "json"])
    run.add_argument("--log-level", choices=["debug", "info", "warning", "error"])

    init = sub.add_parser("init", help="write the starter gateway.yaml")
    init.add_argument("--output", "-o", metavar="FILE", help="default: ./gateway.yaml")
    init.add_argument("--force", action="store_true", help="replace an existing file")
    service = sub.add_parser(
        "install-service", help="write the hardened systemd unit for this chatgate (needs root)"
    )
    service.add_argument("--output", metavar="FILE", help="default: /etc/systemd/system/…")
    service.add_argument("--user", default="chatgate", help="account to run as (created if absent)")
    service.add_argument(
        "--dynamic-user", action="store_true", help="DynamicUser=yes instead of a fixed account"
    )
    service.add_argument("--print", action="store_true", help="print the unit, write nothing")

    sub.add_parser(
        "status", parents=[config, api, out], help="show what the running daemon is doing"
    )
    sub.add_parser("reload", parents=[config, api], help="re-read the config in the running daemon")
    sub.add_parser(
        "dashboard", parents=[config], help="print a sign-in link to the running daemon's dashboard"
    )
    doctor = sub.add_parser(
        "doctor", parents=[config], help="check config, state dir, credentials, platforms, models"
    )
    doctor.add_argument(
        "--fix", action="store_true", help="migrate an old config (.bak kept), create the state dir"
    )
    doctor.add_argument("--offline", action="store_true", help="make no network calls")
    doctor.add_argument("--json", action="store_true", help="print one JSON document")
    doctor.add_argument(
        "--only", action="append", default=[], metavar="ID", help="only checks whose id starts so"
    )
    doctor.add_argument(
        "--skip", action="append", default=[], metavar="ID", help="leave out checks by id prefix"
    )
    doctor.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    diagnostics = sub.add_parser("diagnostics", help="bundles for bug reports").add_subparsers(
        dest="action", required=True
    )
    export = diagnostics.add_parser(
        "export", parents=[config, api], help="write a redacted 0600 tar.gz for a bug report"
    )
    export.add_argument("--out", metavar="FILE", help="default: chatgate-diagnostics-<time>.tar.gz")
    export.add_argument(
        "--log", metavar="FILE", help="a log file to take the last lines of; - is stdin"
    )
    channels = sub.add_parser("channels", help="channel supervision").add_subparsers(
        dest="action", required=True
    )
    restart = channels.add_parser(
        "restart", parents=[config, api], help="un-park / restart a channel now"
    )
    restart.add_argument("name")

    cfg = sub.add_parser(
        "config", help="check, show, migrate the config; its change history and rollback"
    ).add_subparsers(dest="action", required=True)
    cfg.add_parser("check", parents=[config], help="validate the config (exit 78 when invalid)")
    cfg.add_parser(
        "show", parents=[config], help="print the effective config with secrets redacted"
    )
    migrate = cfg.add_parser(
        "migrate", parents=[config], help="upgrade an old config in place (keeps a .bak)"
    )
    migrate.add_argument("--dry-run", action="store_true")

    from chatgate.budgets.actions import ACTIONS as BUDGET_ACTIONS
    from chatgate.budgets.actions import GROUP_HELP as BUDGET_HELP
    from chatgate.cli.action_parsers import add_actions
    from chatgate.config_edit.actions import declared as config_actions
    from chatgate.operator.catalog import BUILTIN, GROUP_HELP
    from chatgate.people.actions import GROUP_HELP as PEOPLE_HELP
    from chatgate.people.actions import people_actions

    add_actions(sub, (*BUILTIN, *BUDGET_ACTIONS), GROUP_HELP | BUDGET_HELP, config, api)
    add_actions(sub, config_actions(), {}, config, api, groups={"config": cfg})
    add_actions(sub, people_actions(None), PEOPLE_HELP, config, api)
    from chatgate.cli import chats_cmd, jobs_cmd, send_cmd

    jobs_cmd.add_parser(sub, config, api)
    send_cmd.add_parser(sub, config, api)
    chats_cmd.add_parser(sub, config, api)
    return parser


def _run(args: argparse.Namespace) -> int:
    from chatgate.cli.run_cmd import run_daemon

    return run_daemon(args.config, log_format=args.log_format, log_level=args.log_level)


def _init(args: argparse.Namespace) -> int:
    from chatgate.cli.init_cmd import run_init

    return run_init(args.output, force=args.force)


def _install_service(args: argparse.Namespace) -> int:
    from chatgate.cli.service_cmd import install_service

    return install_service(
        output=args.output, user=args.user, dynamic_user=args.dynamic_user, print_only=args.print
    )


def _doctor(args: argparse.Namespace) -> int:
    from chatgate.cli.doctor_cmd import run_doctor

    return run_doctor(
        args.config,
        fix=args.fix,
        offline=args.offline,
        json_out=args.json,
        only=args.only,
        skip=args.skip,
        strict=args.strict,
    )


def _diagnostics(args: argparse.Namespace) -> int:
    from chatgate.cli.diagnostics_cmd import export as export_diagnostics

    return export_diagnostics(args.config, out=args.out, log=args.log, url=args.url)


def _config(args: argparse.Namespace) -> int:
    from chatgate.cli import config_cmd

    if args.action == "check":
        return config_cmd.run_check(args.config)
    if args.action == "show":
        return config_cmd.run_show(args.config)
    if args.action == "migrate":
        return config_cmd.run_migrate(args.config, dry_run=args.dry_run)
    from chatgate.cli.action_parsers import chosen
    from chatgate.cli.common import load_or_exit
    from chatgate.cli.state_cmds import run_action
    from chatgate.config_edit.actions import declared as config_actions

    action = chosen(config_actions(), args)
    if action is None:
        return 2
    if action.name == "config_rollback":
        from chatgate.cli.config_edit_cmd import run_rollback

        return run_rollback(load_or_exit(args.config), action, args)
    return run_action(load_or_exit(args.config), action, args)


# Commands that load the config themselves (or need none).
_WITHOUT_CONFIG: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": _run,
    "init": _init,
    "install-service": _install_service,
    "doctor": _doctor,
    "diagnostics": _diagnostics,
    "config": _config,
}


def _with_config(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    from chatgate.cli import chats_cmd, jobs_cmd, send_cmd, status_cmd

    commands: dict[str, Callable[[], int]] = {
        "status": lambda: status_cmd.run_status(loaded, as_json=args.json, url=args.url),
        "dashboard": lambda: status_cmd.run_dashboard_link(loaded),
        "reload": lambda: status_cmd.run_reload(loaded, url=args.url),
        "channels": lambda: status_cmd.run_channel_restart(loaded, args.name, url=args.url),
        "jobs": lambda: jobs_cmd.run(loaded, args),
        "send": lambda: send_cmd.run(loaded, args),
        "chats": lambda: chats_cmd.run(loaded, args),
    }
    command = commands.get(args.command)
    if command is not None:
        return command()
    from chatgate.budgets.actions import ACTIONS as BUDGET_ACTIONS
    from chatgate.cli.action_parsers import chosen
    from chatgate.cli.state_cmds import run_action
    from chatgate.operator.catalog import BUILTIN
    from chatgate.people.actions import people_actions

    action = chosen((*BUILTIN, *BUDGET_ACTIONS, *people_actions(None)), args)
    return 2 if action is None else run_action(loaded, action, args)


_NEGATIVE_ID = re.compile(r"^-\d+(:\S*)?$")
_VALUED = frozenset({"--user", "--url", "--config", "-c"})  # options of `why` that take a value


def _negative_ids(argv: Sequence[str]) -> list[str]:
    """`why telegram -100123:45`: a Telegram group's message id starts with a minus, which
    argparse reads as an option. Then the options go first and the words after a `--`."""
    words = list(argv)
    if "why" not in words or "--" in words:
        return words
    at = words.index("why")
    options: list[str] = []
    positional: list[str] = []
    rest = iter(words[at + 1 :])
    for word in rest:
        if word in _VALUED:
            options += [word, next(rest, "")]
        elif word.startswith("-") and not _NEGATIVE_ID.match(word):
            options.append(word)
        else:
            positional.append(word)
    if not any(_NEGATIVE_ID.match(w) for w in positional):
        return words
    return [*words[: at + 1], *options, "--", *positional]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(_negative_ids(sys.argv[1:] if argv is None else argv))
    without = _WITHOUT_CONFIG.get(args.command)
    if without is not None:
        return without(args)
    from chatgate.cli.common import load_or_exit

    return _with_config(load_or_exit(args.config), args)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
