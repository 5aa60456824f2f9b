"""`chatgate` command-line entry point. Heavy modules load inside each command, not here."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from chatgate import __version__


def _entry_id(text: str) -> int:
    """A dead-letter id: ASCII digits that fit SQLite's integer (else a usage error, exit 2)."""
    from chatgate.http_input import BadInput, bounded_int

    try:
        return bounded_int(text, "id")
    except BadInput as bad:
        raise argparse.ArgumentTypeError(bad.message) from None


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

    cfg = sub.add_parser("config", help="check, show or migrate the config").add_subparsers(
        dest="action", required=True
    )
    cfg.add_parser("check", parents=[config], help="validate the config (exit 78 when invalid)")
    cfg.add_parser(
        "show", parents=[config], help="print the effective config with secrets redacted"
    )
    migrate = cfg.add_parser(
        "migrate", parents=[config], help="upgrade an old config in place (keeps a .bak)"
    )
    migrate.add_argument("--dry-run", action="store_true")

    dlq = sub.add_parser("dlq", help="undelivered replies").add_subparsers(
        dest="action", required=True
    )
    dlq.add_parser("list", parents=[config, api, out])
    for name in ("replay", "drop"):
        p = dlq.add_parser(name, parents=[config, api])
        p.add_argument("id", type=_entry_id)

    pairing = sub.add_parser("pairing", help="approve unknown users").add_subparsers(
        dest="action", required=True
    )
    pairing.add_parser("list", parents=[config, api, out])
    for name in ("approve", "deny"):
        p = pairing.add_parser(name, parents=[config, api])
        p.add_argument("channel")
        p.add_argument("code")
    revoke = pairing.add_parser("revoke", parents=[config, api])
    revoke.add_argument("channel")
    revoke.add_argument("sender_id")

    sessions = sub.add_parser("sessions", help="conversation transcripts").add_subparsers(
        dest="action", required=True
    )
    sessions.add_parser("list", parents=[config, api, out])
    for name, what in (("show", "print a transcript"), ("reset", "start a session over")):
        p = sessions.add_parser(name, parents=[config, api], help=what)
        p.add_argument("key")

    from chatgate.cli import chats_cmd, jobs_cmd, send_cmd

    jobs_cmd.add_parser(sub, config, api)
    send_cmd.add_parser(sub, config, api)
    chats_cmd.add_parser(sub, config, api)
    why = sub.add_parser(
        "why", parents=[config, api, out], help="why did (or didn't) the bot answer a message?"
    )
    why.add_argument("channel")
    why.add_argument("message_id", nargs="?")
    why.add_argument("--user")
    return parser


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
    command = args.command
    if command == "run":
        from chatgate.cli.run_cmd import run_daemon

        return run_daemon(args.config, log_format=args.log_format, log_level=args.log_level)
    if command == "init":
        from chatgate.cli.init_cmd import run_init

        return run_init(args.output, force=args.force)
    if command == "install-service":
        from chatgate.cli.service_cmd import install_service

        return install_service(
            output=args.output,
            user=args.user,
            dynamic_user=args.dynamic_user,
            print_only=args.print,
        )
    if command == "doctor":
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
    if command == "diagnostics":
        from chatgate.cli.diagnostics_cmd import export as export_diagnostics

        return export_diagnostics(args.config, out=args.out, log=args.log, url=args.url)
    if command == "config":
        from chatgate.cli import config_cmd

        if args.action == "check":
            return config_cmd.run_check(args.config)
        if args.action == "show":
            return config_cmd.run_show(args.config)
        return config_cmd.run_migrate(args.config, dry_run=args.dry_run)

    from chatgate.cli.common import load_or_exit

    loaded = load_or_exit(args.config)
    if command == "status":
        from chatgate.cli.status_cmd import run_status

        return run_status(loaded, as_json=args.json, url=args.url)
    if command == "dashboard":
        from chatgate.cli.status_cmd import run_dashboard_link

        return run_dashboard_link(loaded)
    if command in ("reload", "channels"):
        from chatgate.cli.status_cmd import run_channel_restart, run_reload

        if command == "reload":
            return run_reload(loaded, url=args.url)
        return run_channel_restart(loaded, args.name, url=args.url)
    from chatgate.cli import chats_cmd, jobs_cmd, send_cmd
    from chatgate.cli import state_cmds as st

    url = args.url
    if command == "dlq":
        if args.action == "list":
            return st.dlq_list(loaded, as_json=args.json, url=url)
        if args.action == "replay":
            return st.dlq_replay(loaded, args.id, url)
        return st.dlq_drop(loaded, args.id, url)
    if command == "pairing":
        if args.action == "list":
            return st.pairing_list(loaded, as_json=args.json, url=url)
        if args.action == "approve":
            return st.pairing_approve(loaded, args.channel, args.code, url)
        if args.action == "deny":
            return st.pairing_deny(loaded, args.channel, args.code, url)
        return st.pairing_revoke(loaded, args.channel, args.sender_id, url)
    if command == "sessions":
        if args.action == "list":
            return st.sessions_list(loaded, as_json=args.json, url=url)
        if args.action == "reset":
            return st.sessions_reset(loaded, args.key, url)
        return st.sessions_show(loaded, args.key, url)
    if command == "jobs":
        return jobs_cmd.run(loaded, args)
    if command == "send":
        return send_cmd.run(loaded, args)
    if command == "chats":
        return chats_cmd.run(loaded, args)
    if command == "why":
        return st.why(loaded, args.channel, args.message_id, args.user, as_json=args.json, url=url)
    return 2


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
