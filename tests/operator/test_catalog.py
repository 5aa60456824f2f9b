"""The operator actions' declarations: the CLI and the HTTP API read the same arguments from
them, and a feature's own action is served like a built-in one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

import aiohttp
import pytest

from chatgate.cli.action_parsers import chosen
from chatgate.cli.main import _parser
from chatgate.feature.base import Feature
from chatgate.gateway.app import Gateway, GatewayParts
from chatgate.gateway.http.dashboard import snapshot
from chatgate.gateway.operator_actions import declared_actions
from chatgate.http_input import BadInput
from chatgate.operator.actions import Action, AnyAction, DashboardPart, Route, arg, by_name
from chatgate.operator.arguments import (
    DlqListArgs,
    EntryArgs,
    NoArgs,
    PairingCodeArgs,
    RevokeArgs,
    SessionArgs,
    WhyArgs,
)
from chatgate.operator.catalog import BUILTIN
from chatgate.operator.context import OperatorContext
from chatgate.operator.parse import convert, from_namespace, to_request
from tests.harness import build, operator, url, write_config

# A command line, the action it names, and the arguments it carries.
COMMAND_LINES: list[tuple[list[str], str, Any]] = [
    (["dlq", "list"], "dlq_list", DlqListArgs(100)),
    (["dlq", "list", "--limit", "5"], "dlq_list", DlqListArgs(5)),
    (["dlq", "replay", "7"], "dlq_replay", EntryArgs(7)),
    (["dlq", "drop", "8"], "dlq_drop", EntryArgs(8)),
    (["pairing", "list"], "pairing_list", NoArgs()),
    (["pairing", "approve", "tg", "AB12"], "pairing_approve", PairingCodeArgs("tg", "AB12")),
    (["pairing", "deny", "tg", "AB12"], "pairing_deny", PairingCodeArgs("tg", "AB12")),
    (["pairing", "revoke", "tg", "42"], "pairing_revoke", RevokeArgs("tg", "42")),
    (["sessions", "list"], "sessions_list", NoArgs()),
    (["sessions", "show", "a:b/c"], "session_show", SessionArgs("a:b/c")),
    (["sessions", "reset", "a:b"], "session_reset", SessionArgs("a:b")),
    (["why", "tg", "9"], "why", WhyArgs("tg", "9", None)),
    (["why", "tg", "--user", "u1"], "why", WhyArgs("tg", None, "u1")),
]


@pytest.mark.parametrize(("line", "name", "expected"), COMMAND_LINES)
def test_a_command_line_names_its_action_and_the_api_reads_the_same_arguments(
    line: list[str], name: str, expected: Any
) -> None:
    ns = _parser().parse_args(line)
    action = chosen(BUILTIN, ns)
    assert action is not None and action.name == name
    args = from_namespace(action, ns)
    assert args == expected
    method, path, body = to_request(action, args)
    assert method == action.route.method
    # What the daemon reads back from that request (path, query or body) is the same.
    given = dict(body or {})
    template, _, query = path.partition("?")
    for name_, value in zip(action.route.path.split("/"), template.split("/"), strict=True):
        if name_.startswith("{"):
            given[name_[1:-1]] = unquote(value)
    given |= dict(parse_qsl(query))
    assert convert(action, given) == args


def test_every_action_is_declared_once_and_its_path_names_its_arguments() -> None:
    assert len(by_name(BUILTIN)) == len(BUILTIN)
    for action in BUILTIN:
        names = {f.name for f in action.fields()}
        assert set(action.route.path_params()) <= names, action.name
    with pytest.raises(ValueError, match="declared twice"):
        by_name((BUILTIN[0], BUILTIN[0]))


@pytest.mark.parametrize(
    ("given", "message"),
    [({}, "missing parameter: id"), ({"id": "-1"}, "id must be"), ({"id": "１"}, "id must be")],
)
def test_a_bad_argument_is_a_400_naming_it(given: dict[str, str], message: str) -> None:
    action = next(a for a in BUILTIN if a.name == "dlq_drop")
    with pytest.raises(BadInput, match=message) as bad:
        convert(action, given)
    assert bad.value.status == 400


def test_the_cli_refuses_an_out_of_range_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _parser().parse_args(["dlq", "drop", "99999999999999999999"])
    assert exited.value.code == 2 and "id must be an integer" in capsys.readouterr().err


@dataclass(frozen=True)
class EchoArgs:
    word: str = arg(help="what to echo")
    times: int = arg(1, cli="option", low=1, high=3)


@dataclass(frozen=True)
class Echoed:
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text}


class EchoFeature(Feature):
    """A feature with an operator action of its own."""

    name = "echo"

    def __init__(self) -> None:
        self.calls = 0

    def actions(self) -> Sequence[AnyAction]:
        async def echo(ctx: OperatorContext, args: EchoArgs) -> Echoed:
            self.calls += 1
            return Echoed(" ".join([args.word] * args.times))

        return (
            Action(
                "echo", EchoArgs, Echoed, echo, Route("GET", "/api/echo"),
                dashboard=DashboardPart("echo", {"word": "hi"}),
            ),
        )  # fmt: skip


def test_a_feature_cannot_take_a_built_in_name() -> None:
    class Clash(EchoFeature):
        def actions(self) -> Sequence[AnyAction]:
            return (BUILTIN[0],)

    with pytest.raises(ValueError, match="dlq_list"):
        declared_actions([Clash()])


async def test_a_features_action_is_served_on_the_api_and_the_dashboard(tmp_path: Path) -> None:
    built = build(write_config(tmp_path, "channels: {}\n"))
    feature = EchoFeature()
    gw = Gateway(
        GatewayParts(
            rt=built.rt,
            pipeline=built.pipeline,
            registry=built.registry,
            routes=built.routes,
            env=built.env,
            notifier=built.notifier,
            state_lock=built.state_lock,
            features=(*built.features, feature),
        )
    )
    await gw.start()
    try:
        async with aiohttp.ClientSession(headers=operator(gw)) as client:
            async with client.get(url(gw, "/api/echo"), params={"word": "yo", "times": "2"}) as r:
                assert r.status == 200 and await r.json() == {"text": "yo yo"}
            async with client.get(url(gw, "/api/echo"), params={"word": "yo", "times": "9"}) as r:
                assert r.status == 400 and "times must be an integer 1-3" in await r.text()
        shown = await snapshot(gw)
        assert shown["echo"] == {"text": "hi"}
        assert {"dlq", "pairing", "stats"} <= set(shown)
    finally:
        await gw.stop()
    assert feature.calls == 2
