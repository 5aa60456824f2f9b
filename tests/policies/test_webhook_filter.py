"""Webhook filter trees, field resolution and safe templates."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.policies.webhook_filter import (
    OPERATORS,
    matches,
    render_template,
    resolve_field,
    template_fields,
    validate_filter,
    validate_template,
)

EVENT: dict[str, Any] = {
    "headers": {"X-GitHub-Event": "issues", "Content-Type": "application/json"},
    "query": {"token": "t", "page": "2"},
    "payload": {
        "action": "opened",
        "number": 42,
        "draft": False,
        "labels": ["bug", "p1"],
        "commits": [{"id": "abc123", "message": "fix: things"}, {"id": "def456"}],
        "issue": {"title": "Crash on start", "body": None, "user": {"login": "ann"}},
        "ref": "refs/heads/main",
        "score": 1.5,
    },
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("payload.action", "opened"),
        ("payload.issue.user.login", "ann"),
        ("headers.X-GitHub-Event", "issues"),
        ("headers.x-github-event", "issues"),
        ("HEADERS.X-GitHub-Event", None),
        ("payload.Action", None),
        ("payload.commits.0.id", "abc123"),
        ("payload.commits.1.id", "def456"),
        ("payload.commits.2.id", None),
        ("payload.commits.-1.id", None),
        ("payload.labels.1", "p1"),
        ("payload.action.0", None),
        ("payload.issue.body", None),
        ("payload.number.value", None),
        ("payload", EVENT["payload"]),
        ("", None),
        ("payload..action", None),
        ("nope.deeper", None),
    ],
)
def test_resolve_field(path: str, value: Any) -> None:
    assert resolve_field(EVENT, path) == value


def test_resolve_field_tolerates_odd_inputs() -> None:
    assert resolve_field(EVENT, 3) is None  # type: ignore[arg-type]
    assert resolve_field({"payload": "text"}, "payload.0") is None
    assert resolve_field({"payload": {1: "x"}}, "payload.1") is None
    assert resolve_field({"headers": {3: "x", "A": 1}}, "headers.a") == 1


def leaf(field: str, **op: Any) -> dict[str, Any]:
    return {"field": field, **op}


MATCH_CASES = [
    ("none-matches-all", None, True),
    ("empty-matches-all", {}, True),
    ("exists", leaf("payload.action", exists=True), True),
    ("exists-false-missing", leaf("payload.nope", exists=False), True),
    ("exists-null-is-missing", leaf("payload.issue.body", exists=True), False),
    ("no-op-means-exists", leaf("payload.number"), True),
    ("no-op-missing", leaf("payload.nope"), False),
    ("equals-str", leaf("headers.x-github-event", equals="issues"), True),
    ("equals-int", leaf("payload.number", equals=42), True),
    ("equals-numeric-string", leaf("query.page", equals=2), True),
    ("equals-bool-not-int", leaf("payload.draft", equals=0), False),
    ("equals-bool", leaf("payload.draft", equals=False), True),
    ("equals-wrong", leaf("payload.action", equals="closed"), False),
    ("not-equals", leaf("payload.action", not_equals="closed"), True),
    ("not-equals-missing", leaf("payload.nope", not_equals="x"), True),
    ("contains-substring", leaf("payload.commits.0.message", contains="fix"), True),
    ("contains-list", leaf("payload.labels", contains="bug"), True),
    ("contains-list-miss", leaf("payload.labels", contains="wontfix"), False),
    ("contains-mapping-key", leaf("payload.issue", contains="title"), True),
    ("contains-on-number", leaf("payload.number", contains="4"), False),
    ("in", leaf("payload.action", **{"in": ["opened", "reopened"]}), True),
    ("in-miss", leaf("payload.action", **{"in": ["closed"]}), False),
    ("regex", leaf("payload.ref", regex=r"^refs/heads/(main|master)$"), True),
    ("regex-number", leaf("payload.number", regex=r"^4\d$"), True),
    ("regex-missing", leaf("payload.nope", regex=".*"), False),
    ("regex-on-list", leaf("payload.labels", regex="bug"), False),
    ("startswith", leaf("payload.ref", startswith="refs/heads/"), True),
    ("startswith-miss", leaf("payload.ref", startswith="refs/tags/"), False),
    ("all", {"all": [leaf("payload.action", equals="opened"), leaf("payload.number")]}, True),
    ("all-one-fails", {"all": [leaf("payload.action", equals="x"), leaf("payload.number")]},
     False),
    ("all-empty", {"all": []}, True),
    ("any", {"any": [leaf("payload.action", equals="x"), leaf("payload.number")]}, True),
    ("any-empty", {"any": []}, False),
    ("not", {"not": leaf("payload.action", equals="closed")}, True),
    ("nested", {"all": [{"any": [leaf("payload.labels", contains="p0"),
                                 leaf("payload.labels", contains="p1")]},
                        {"not": leaf("payload.draft", equals=True)}]}, True),
    ("unknown-op-fails-closed", leaf("payload.action", eq="opened"), False),
    ("two-ops-fail-closed", leaf("payload.action", equals="opened", contains="o"), False),
    ("bad-regex-fails-closed", leaf("payload.ref", regex="("), False),
    ("in-needs-list", leaf("payload.action", **{"in": "opened"}), False),
    ("not-of-malformed-stays-closed", {"not": leaf("payload.action", eq="x")}, False),
    ("any-with-malformed-branch", {"any": [leaf("payload.number"), 7]}, False),
    ("non-mapping", ["all"], False),
    ("string-node", "payload.action", False),
    ("combinator-plus-leaf", {"all": [], "field": "payload.action"}, False),
    ("all-not-a-list", {"all": leaf("payload.number")}, False),
    ("field-not-string", {"field": 5}, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("node", "expected"), [pytest.param(*case[1:], id=case[0]) for case in MATCH_CASES]
)
def test_matches(node: Any, expected: bool) -> None:
    assert matches(EVENT, node) is expected


def test_deep_nesting_fails_closed() -> None:
    node: Any = leaf("payload.number")
    for _ in range(100):
        node = {"not": {"not": node}}
    assert matches(EVENT, node) is False
    assert "nested deeper" in validate_filter(node)[0]


VALIDATE_CASES = [
    (None, []),
    ({}, []),
    ({"all": [leaf("a.b", equals=1), leaf("a.c", eq=2)]},
     ["when.all[1]: unknown operator 'eq' (expected one of " + ", ".join(OPERATORS) + ")"]),
    ({"any": [{"not": leaf("a", regex="(")}]}, ["when.any[0].not: bad regex '('"]),
    (leaf("a", exists="yes"), ["when: 'exists' takes true or false"]),
    (leaf("a", **{"in": 3}), ["when: 'in' takes a list of values"]),
    (leaf("a", startswith=1), ["when: 'startswith' takes a string"]),
    (leaf("a", regex=1), ["when: 'regex' takes a string"]),
    (leaf("a", equals=1, contains=2), ["when: one operator per leaf, got equals, contains"]),
    (leaf("a..b"), ["when: 'field' must be a dotted path"]),
    ({"all": "x"}, ["when.all: expected a list of conditions"]),
    ({"all": [], "any": []}, ["when: 'all' cannot be combined with other keys ('any')"]),
    ({"foo": 1}, ["when: expected 'all', 'any', 'not' or a 'field' leaf, got keys 'foo'"]),
    ([1], ["when: expected a mapping, got list"]),
    ({"all": [1, leaf("x", eq=1)]},
     ["when.all[0]: expected a mapping, got int", "when.all[1]: unknown operator 'eq'"]),
]  # fmt: skip


@pytest.mark.parametrize(("node", "problems"), VALIDATE_CASES)
def test_validate_filter(node: Any, problems: list[str]) -> None:
    got = validate_filter(node)
    assert len(got) == len(problems)
    for message, prefix in zip(got, problems, strict=True):
        assert message.startswith(prefix)


def test_validate_filter_custom_path() -> None:
    assert validate_filter({"not": 1}, "routes[2].when") == [
        "routes[2].when.not: expected a mapping, got int"
    ]


TEMPLATE_CASES = [
    ("New issue: {payload.issue.title}", "New issue: Crash on start"),
    ("{ payload.issue.user.login } opened #{payload.number}", "ann opened #42"),
    ("{headers.x-github-event}", "issues"),
    ("{payload.commits.0.id}", "abc123"),
    ("missing: [{payload.nope}]", "missing: []"),
    ("null: [{payload.issue.body}]", "null: []"),
    ("{payload.labels}", '["bug","p1"]'),
    ("{payload.issue.user}", '{"login":"ann"}'),
    ("{payload.draft} {payload.score}", "false 1.5"),
    ("{{literal}} {{{payload.action}}}", "{literal} {opened}"),
    ('json-ish: {{"a": 1}}', 'json-ish: {"a": 1}'),
    ("{payload.action!r}", "{payload.action!r}"),
    ("{payload.number:>10}", "{payload.number:>10}"),
    ("{payload.__class__}", ""),
    ("{0}", ""),
    ("{}", "{}"),
    ("unclosed {payload.action", "unclosed {payload.action"),
    ("stray } brace", "stray } brace"),
    ("", ""),
]


@pytest.mark.parametrize(("template", "rendered"), TEMPLATE_CASES)
def test_render_template(template: str, rendered: str) -> None:
    assert render_template(template, EVENT) == rendered


def test_template_values_are_not_re_expanded() -> None:
    event = {"payload": {"title": "{payload.secret}", "secret": "s3cr3t"}}
    assert render_template("{payload.title}", event) == "{payload.secret}"


@pytest.mark.parametrize(
    ("template", "fields"),
    [("{payload.a} {headers.b} {payload.a}", ["payload.a", "headers.b"]),
     ("{{payload.a}} {x!r} {}", []),
     ("{ query.page }", ["query.page"])],
)  # fmt: skip
def test_template_fields(template: str, fields: list[str]) -> None:
    assert template_fields(template) == fields


@pytest.mark.parametrize(
    ("template", "count"),
    [("{payload.a} {{ok}}", 0), ("{payload.a!r}", 1), ("{a} } {", 2), ("{}", 1)],
)
def test_validate_template(template: str, count: int) -> None:
    assert len(validate_template(template)) == count


json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_like = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["all", "any", "not", "field", *OPERATORS, "payload", "a", "0"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=8,
)
paths = st.lists(st.sampled_from(["payload", "headers", "a", "0", "field", ""]), max_size=4).map(
    ".".join
)
node_st = st.recursive(
    st.builds(
        lambda field, op, value: {"field": field, op: value},
        paths,
        st.sampled_from([*OPERATORS, "bogus"]),
        json_like,
    ),
    lambda inner: (
        st.builds(lambda xs: {"all": xs}, st.lists(inner, max_size=3))
        | st.builds(lambda xs: {"any": xs}, st.lists(inner, max_size=3))
        | st.builds(lambda x: {"not": x}, inner)
    ),
    max_leaves=6,
)
flat = st.dictionaries(st.sampled_from(["a", "A", "field", "0"]), st.text(max_size=4), max_size=3)
event_st = st.fixed_dictionaries({"payload": json_like, "headers": flat, "query": flat})


@settings(max_examples=60)
@given(event=event_st, node=node_st | json_like)
def test_filter_never_raises(event: dict[str, Any], node: Any) -> None:
    result = matches(event, node)
    assert isinstance(result, bool)
    problems = validate_filter(node)
    assert all(isinstance(p, str) and p for p in problems)
    if problems:
        assert result is False


@settings(max_examples=40)
@given(
    template=st.text(alphabet="{}.ab0 payloadheaders!:", max_size=40),
    event=event_st,
    path=paths,
)
def test_templates_never_raise(template: str, event: dict[str, Any], path: str) -> None:
    assert isinstance(render_template(template, event), str)
    assert isinstance(template_fields(template), list)
    assert isinstance(validate_template(template), list)
    resolve_field(event, path)


@settings(max_examples=50)
@given(text=st.text(alphabet="ab .x{}", max_size=30))
def test_brace_free_text_renders_unchanged(text: str) -> None:
    plain = text.replace("{", "").replace("}", "")
    assert render_template(plain, EVENT) == plain
    escaped = text.replace("{", "{{").replace("}", "}}")
    assert render_template(escaped, EVENT) == text
