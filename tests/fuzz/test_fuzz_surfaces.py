"""Fuzz every route the daemon serves over raw sockets: the operator API, web chat, Telegram
webhook mode, Slack's Events API and webhook routes, with framing no client library sends
(chunk extensions and trailers, pipelining, HTTP/1.0, wrong Content-Length, Expect:
100-continue) and header bytes outside ASCII.

Every route in the daemon's own route table is fuzzed (`test_every_route_is_fuzzed`).
Invariants: no answer is a 500 (a 503 is a documented refusal: a full stream cap, a store that
cannot write); the daemon logs no traceback.
"""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatgate.channels.signatures import sign
from chatgate.gateway.http.app import build_app
from tests.fakes.slack import SIGNING_SECRET
from tests.fakes.whatsapp import VERIFY_TOKEN, envelope
from tests.fuzz.conftest import fuzz_settings
from tests.fuzz.surfaces import (
    API_TOKEN,
    HOOK_SECRET,
    SLACK_PATH,
    TEAMS_PATH,
    TG_PATH,
    TG_SECRET,
    WA_PATH,
    Live,
    start,
)

API_ROUTES = [
    ("GET", "/api/status"),
    ("GET", "/api/dlq"),
    ("POST", "/api/dlq/{n}/replay"),
    ("DELETE", "/api/dlq/{n}"),
    ("GET", "/api/pairing"),
    ("POST", "/api/pairing/approve"),
    ("POST", "/api/pairing/deny"),
    ("POST", "/api/pairing/revoke"),
    ("GET", "/api/sessions"),
    ("GET", "/api/sessions/show"),
    ("POST", "/api/sessions/reset"),
    ("GET", "/api/why"),
    ("GET", "/api/stats"),
    ("POST", "/api/channels/{n}/restart"),
    ("GET", "/api/stream"),
    ("GET", "/api/chats"),
    ("POST", "/api/chats/pause"),
    ("POST", "/api/chats/resume"),
    ("POST", "/api/chats/reply"),
    ("GET", "/api/config"),
    ("POST", "/api/config/check"),
    ("POST", "/api/config/apply"),
    ("GET", "/api/config/history"),
    ("POST", "/api/config/rollback"),
    ("POST", "/api/reload"),
    ("GET", "/api/usage"),
    ("POST", "/api/budgets/reset"),
    ("GET", "/api/people/show"),
    ("POST", "/api/people/export"),
    ("POST", "/api/people/erase"),
    ("GET", "/api/people/audit"),
    ("POST", "/api/send"),
    ("GET", "/api/jobs"),
    ("POST", "/api/jobs"),
    ("GET", "/api/jobs/{n}"),
    ("DELETE", "/api/jobs/{n}"),
    ("GET", "/api/jobs/{n}/history"),
    ("POST", "/api/jobs/{n}/run"),
    ("POST", "/api/jobs/{n}/pause"),
    ("POST", "/api/jobs/{n}/resume"),
    ("GET", "/dashboard/config"),
    ("GET", "/dashboard/config/static/{n}"),
    ("GET", "/files/{n}/x.txt"),
    ("GET", "/dashboard"),
    ("GET", "/dashboard/static/{n}"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
]
CHAT_ROUTES = [
    ("GET", "/chat"),
    ("GET", "/chat/static/{n}"),
    ("GET", "/chat/api/session"),
    ("POST", "/chat/api/session"),
    ("POST", "/chat/api/send"),
    ("POST", "/chat/api/upload"),
    ("GET", "/chat/api/events"),
]
NUMBERS = ["1", "0", "²", "¹⁰", "٣", "-1", "9" * 23, "99999999999999999999", "abc", "%00", "1e3"]
QUICK = 60  # examples per surface in `make test`; `make fuzz` sets thousands
ODD_TEXT = ["\\ud800", "\\udcff", "\\u0000", "é", "😀", "", " ", "x" * 300]


def _bytes_text(max_size: int = 40) -> st.SearchStrategy[bytes]:
    return st.binary(max_size=max_size).filter(lambda b: b"\r" not in b and b"\n" not in b)


header_values = (
    st.sampled_from([b"\xe9", b"\xff\xfe", b"\xc3\xa9", b"a\x00b", b"", b" x ", b"\x80abc"])
    | _bytes_text()
    | st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_leaf | st.sampled_from(ODD_TEXT),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=15,
)


@st.composite
def bodies(draw: st.DrawFn, shape: dict[str, object] | None = None) -> bytes:
    kind = draw(st.sampled_from(["json", "shaped", "bytes", "deep", "escape", "empty", "bomb"]))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    if kind == "shaped" and shape is not None:
        data = dict(shape)
        for key in draw(st.lists(st.sampled_from(sorted(shape)), max_size=3)):
            data[key] = draw(json_values | st.sampled_from(NUMBERS))
        return json.dumps(data).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "deep":
        depth = draw(st.integers(min_value=60, max_value=20_000))
        return b"[" * depth + b"]" * depth
    if kind == "escape":
        odd = draw(st.sampled_from(ODD_TEXT))
        return (f'{{"text": "{odd}", "client_id": "abcdefgh12", "key": "{odd}"}}').encode()
    if kind == "bomb":
        return gzip.compress(b" " * draw(st.sampled_from([10, 70_000, 2_000_000])))
    return b""


@st.composite
def framed(
    draw: st.DrawFn, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes
) -> bytes:
    """One request as bytes, with one of the framings a real client rarely sends."""
    how = draw(
        st.sampled_from(
            [
                "length",
                "chunked",
                "http10",
                "expect",
                "pipelined",
                "short",
                "long",
                "both",
                "double",
            ]
        )
    )
    version = b"HTTP/1.0" if how == "http10" else b"HTTP/1.1"
    line = method.encode() + b" " + target.encode("utf-8", "surrogatepass") + b" " + version
    head = [line, b"Host: 127.0.0.1"] + [k + b": " + v for k, v in headers]
    if how == "chunked":
        ext = draw(st.sampled_from([b"", b";ext=1", b';name="v"', b";" + b"x" * 50]))
        cut = draw(st.integers(min_value=0, max_value=len(body)))
        chunks = b"".join(
            b"%x%s\r\n%s\r\n" % (len(part), ext, part) for part in (body[:cut], body[cut:]) if part
        )
        trailer = draw(st.sampled_from([b"", b"X-Trailer: 1\r\n", b"Content-Length: 5\r\n"]))
        return b"\r\n".join(
            [*head, b"Transfer-Encoding: chunked", b"", chunks + b"0\r\n" + trailer + b"\r\n"]
        )
    length = len(body)
    extra: list[bytes] = []
    if how == "short":
        length = max(0, length - draw(st.integers(min_value=1, max_value=10)))
    elif how == "long":
        length += draw(st.integers(min_value=1, max_value=10))
    elif how == "expect":
        extra.append(b"Expect: 100-continue")
    elif how == "both":
        extra.append(b"Transfer-Encoding: chunked")
    elif how == "double":
        extra.append(b"Content-Length: %d" % (length + 1))
    one = b"\r\n".join([*head, *extra, b"Content-Length: %d" % length, b"", body])
    if how == "pipelined":
        return one + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    return one


def _target(draw: st.DrawFn, path: str, params: list[str]) -> str:
    path = path.replace("{n}", draw(st.sampled_from([*NUMBERS, "app.js", "../x", "%2e%2e/x"])))
    query = draw(
        st.lists(
            st.tuples(st.sampled_from(params), st.sampled_from(NUMBERS + ODD_TEXT)), max_size=3
        )
    )
    if query:
        path += "?" + "&".join(f"{k}={v}" for k, v in query)
    return path


@st.composite
def api_requests(draw: st.DrawFn) -> bytes:
    method, path = draw(st.sampled_from(API_ROUTES))
    method = draw(st.sampled_from([method, method, "PUT", "HEAD"]))
    target = _target(
        draw,
        path,
        ["limit", "key", "channel", "message_id", "user", "id", "every", "exp", "sig", "type"],
    )
    auth = draw(st.sampled_from([API_TOKEN, API_TOKEN, API_TOKEN + "x", ""]))
    headers = [(b"Authorization", b"Bearer " + auth.encode())]
    headers += _content_headers(draw)
    shape = {"channel": "webchat", "code": "ABC123", "key": "k", "sender_id": "1"}
    shape |= {"chat": "webchat:x", "text": "hi", "for_s": 5, "by": "cli", "user": "webchat:1"}
    shape |= {
        "yaml": "gateway: {}\n",
        "version": "x",
        "rule": "r",
        "every": "1h",
        "agent": "default",
    }
    body = draw(bodies(shape))
    return draw(framed(method, target, headers, body))


@st.composite
def chat_requests(draw: st.DrawFn, live: Live) -> tuple[bytes, bool]:
    method, path = draw(st.sampled_from(CHAT_ROUTES))
    target = _target(draw, path, ["after", "x"])
    cookie = draw(
        st.sampled_from([live.cookie.encode()] * 8 + [b""])
        | header_values.map(lambda v: b"chatgate_webchat=" + v)
    )
    headers = [(b"Cookie", cookie)] if cookie else []
    if draw(st.integers(0, 9)):
        headers.append((b"X-CSRF-Token", live.csrf.encode()))
    if draw(st.booleans()):
        headers.append(
            (b"Last-Event-ID", draw(header_values | st.sampled_from([n.encode() for n in NUMBERS])))
        )
    headers += _content_headers(draw)
    shape = {
        "client_id": "abcdefgh12",
        "text": "hi",
        "choice": "a",
        "label": "A",
        "agent": "default",
        "token": "x",
    }
    body = draw(bodies(shape))
    stream = method == "GET" and path.endswith("events")
    return draw(framed(method, target, headers, body)), stream


@st.composite
def telegram_requests(draw: st.DrawFn) -> bytes:
    secret = draw(st.sampled_from([TG_SECRET, TG_SECRET, TG_SECRET, "guess"]))
    headers = [(b"X-Telegram-Bot-Api-Secret-Token", secret.encode()), *_content_headers(draw)]
    update = {
        "update_id": 7,
        "message": {
            "message_id": 1,
            "date": 0,
            "chat": {"id": 5, "type": "private"},
            "from": {"id": 5, "is_bot": False, "first_name": "a"},
            "text": "hi",
        },
    }
    return draw(framed("POST", TG_PATH, headers, draw(bodies(update))))


@st.composite
def slack_requests(draw: st.DrawFn) -> bytes:
    body = draw(
        bodies(
            {
                "type": "event_callback",
                "token": "t",
                "team_id": "T1",
                "event": {"type": "message", "text": "hi", "user": "U1", "channel": "D1"},
                "challenge": "c",
            }
        )
        | st.sampled_from([b"payload=%7B%7D", b"payload=%ZZ", b"command=/x&text=%FF"])
    )
    headers = _content_headers(draw)
    if draw(st.integers(0, 4)):
        headers += [
            (k.encode(), v.encode())
            for k, v in sign("slack", SIGNING_SECRET, body, time.time()).items()
        ]
    return draw(framed("POST", SLACK_PATH, headers, body))


@st.composite
def whatsapp_requests(draw: st.DrawFn, live: Live) -> bytes:
    if draw(st.integers(0, 5)) == 0:  # Meta's GET handshake
        params = ["hub.mode", "hub.verify_token", "hub.challenge"]
        target = _target(draw, WA_PATH, params)
        if draw(st.booleans()):
            target = f"{WA_PATH}?hub.mode=subscribe&hub.verify_token={VERIFY_TOKEN}&hub.challenge="
            target += draw(st.sampled_from(NUMBERS + ODD_TEXT))
        return draw(framed("GET", target, [], b""))
    message = {"from": "15551230001", "id": "wamid.F1", "timestamp": "0", "type": "text"}
    message["text"] = {"body": "hi"}
    value = {"contacts": [{"profile": {"name": "A"}, "wa_id": "15551230001"}]}
    shaped = envelope(value | {"messages": [message]})
    body = draw(bodies(shaped) | bodies(message).map(lambda b: _wrapped(b, value)))
    headers = _content_headers(draw)
    if draw(st.integers(0, 4)):
        headers.append((b"X-Hub-Signature-256", live.fakes.wa.signature(body).encode()))
    return draw(framed("POST", WA_PATH, headers, body))


def _wrapped(message: bytes, value: dict[str, object]) -> bytes:
    """A fuzzed message inside a well-formed envelope (its JSON, or its bytes as a string)."""
    try:
        return json.dumps(envelope(value | {"messages": [json.loads(message)]})).encode()
    except (ValueError, RecursionError):  # not JSON, or nested too deep to re-encode
        text = message.decode("utf-8", "replace")
        return json.dumps(envelope(value | {"messages": [text]})).encode()


@st.composite
def teams_requests(draw: st.DrawFn, live: Live) -> bytes:
    teams = live.fakes.teams
    activity = teams.message("hi", activity_id="fuzz-1")
    kinds = ["message", "invoke", "conversationUpdate", "messageReaction", "x", ""]
    activity["type"] = draw(st.sampled_from(kinds))
    if activity["type"] == "invoke":
        activity["name"] = draw(st.sampled_from(["adaptiveCard/action", "fileConsent/invoke", "x"]))
        activity["value"] = draw(json_values)
    body = draw(bodies(activity))
    token = draw(st.sampled_from([live.teams_token] * 4 + ["", "x.y.z", live.forged_token]))
    headers = [*_content_headers(draw)]
    if token:
        headers.append((b"Authorization", b"Bearer " + token.encode()))
    return draw(framed("POST", TEAMS_PATH, headers, body))


@st.composite
def webhook_requests(draw: st.DrawFn) -> bytes:
    route = draw(st.sampled_from(["/f/gh", "/f/tpl"]))
    body = draw(bodies({"a": "x"}))
    headers = [*_content_headers(draw), (b"X-Odd", draw(header_values))]
    if route == "/f/gh" and draw(st.integers(0, 3)):
        headers += [
            (k.encode(), v.encode())
            for k, v in sign("github", HOOK_SECRET, body, time.time()).items()
        ]
    return draw(framed("POST", _target(draw, route, ["q"]), headers, body))


def _content_headers(draw: st.DrawFn) -> list[tuple[bytes, bytes]]:
    ctype = draw(
        st.sampled_from(
            [
                b"application/json",
                b"application/json; charset=hex",
                b"application/json; charset=UTF-8",
                b"application/json; charset=latin-1",
                b"text/plain",
                b"application/x-www-form-urlencoded",
                b"x",
            ]
        )
        | header_values
    )
    headers = [(b"Content-Type", ctype)]
    encoding = draw(
        st.sampled_from([None, None, b"gzip", b"deflate", b"br", b"identity", b"gzip, gzip"])
    )
    if encoding is not None:
        headers.append((b"Content-Encoding", encoding))
    return headers


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    yield from start(tmp_path_factory.mktemp("fuzz-surfaces"))


def _check(live: Live, statuses: list[int], sent: bytes) -> None:
    assert all(code < 500 or code == 503 for code in statuses), (statuses, sent[:400])
    found = live.tracebacks.describe()
    live.tracebacks.records.clear()  # each failure is reported once, by the input that caused it
    assert not found, found


@fuzz_settings("api", quick=QUICK)
@given(raw=api_requests())
def test_api(live: Live, raw: bytes) -> None:
    stream = raw.startswith(b"GET /api/stream")
    _check(live, live.request("api", raw, stream=stream), raw)


@fuzz_settings("webchat", quick=QUICK)
@given(data=st.data())
def test_web_chat(live: Live, data: st.DataObject) -> None:
    raw, stream = data.draw(chat_requests(live))
    _check(live, live.request("webchat", raw, stream=stream), raw)


@fuzz_settings("telegram_webhook", quick=QUICK)
@given(raw=telegram_requests())
def test_telegram_webhook(live: Live, raw: bytes) -> None:
    _check(live, live.request("telegram_webhook", raw), raw)


@fuzz_settings("slack", quick=QUICK)
@given(raw=slack_requests())
def test_slack_events(live: Live, raw: bytes) -> None:
    _check(live, live.request("slack", raw), raw)


@fuzz_settings("whatsapp", quick=QUICK)
@given(data=st.data())
def test_whatsapp_webhook(live: Live, data: st.DataObject) -> None:
    raw = data.draw(whatsapp_requests(live))
    _check(live, live.request("whatsapp", raw), raw)


@fuzz_settings("teams", quick=QUICK)
@given(data=st.data())
def test_teams_endpoint(live: Live, data: st.DataObject) -> None:
    raw = data.draw(teams_requests(live))
    _check(live, live.request("teams", raw), raw)


@fuzz_settings("webhook_raw", quick=QUICK)
@given(raw=webhook_requests())
def test_webhook_raw(live: Live, raw: bytes) -> None:
    _check(live, live.request("webhook_raw", raw), raw)


@fuzz_settings("framing", quick=QUICK)
@given(raw=st.binary(max_size=300) | _bytes_text(200).map(lambda b: b + b"\r\n\r\n"))
def test_garbage_on_the_socket(live: Live, raw: bytes) -> None:
    _check(live, live.request("framing", raw), raw)


def _fuzzed() -> set[str]:
    """The paths the strategies above draw from, routes' ``{n}`` parts as written."""
    routes = API_ROUTES + CHAT_ROUTES
    paths = {path for _, path in routes} | {TG_PATH, SLACK_PATH, WA_PATH, TEAMS_PATH}
    return paths | {"/f/gh", "/f/tpl", "/healthz", "/readyz", "/metrics"}


def test_every_route_is_fuzzed(live: Live) -> None:
    """The route table the daemon serves (its app's and the dynamic ones channels and features
    add), each path or prefix among the fuzzed ones: a new route is fuzzed or this fails."""
    gateway = live.gateway
    served = {
        re.sub(r"\{[^}]+\}", "{n}", route.resource.canonical)
        for route in build_app(gateway, gateway.routes).router.routes()
        if route.resource is not None and route.resource.canonical != "/{tail}"
    }
    served |= gateway.routes.paths()
    fuzzed = _fuzzed()
    missing = sorted(
        path
        for path in served
        if path.rstrip("/") not in fuzzed and not any(f.startswith(path + "/") for f in fuzzed)
    )
    assert not missing, missing
