"""Bot-loop guard sequences and final-reply classification."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.model.reasons import OutcomeKind
from chatgate.policies.final_reply import SILENCE_MARKERS, classify_final
from chatgate.policies.loopguard import BotLoopGuard, LoopPolicy

BOT, HUMAN = True, False

# (case id, policy, [(chat, is_bot, now)], expected verdicts)
LOOP_CASES = [
    ("humans-unlimited", LoopPolicy(2, 60.0), [("c", HUMAN, float(t)) for t in range(10)],
     [True] * 10),
    ("bots-capped", LoopPolicy(2, 60.0), [("c", BOT, 0.0), ("c", BOT, 1.0), ("c", BOT, 2.0)],
     [True, True, False]),
    ("default-allows-five", LoopPolicy(), [("c", BOT, float(t)) for t in range(6)],
     [True] * 5 + [False]),
    ("human-resets-streak", LoopPolicy(2, 60.0),
     [("c", BOT, 0.0), ("c", BOT, 1.0), ("c", HUMAN, 2.0), ("c", BOT, 3.0), ("c", BOT, 4.0),
      ("c", BOT, 5.0)],
     [True, True, True, True, True, False]),
    ("chats-independent", LoopPolicy(1, 60.0), [("a", BOT, 0.0), ("b", BOT, 0.0), ("a", BOT, 1.0)],
     [True, True, False]),
    ("window-slides", LoopPolicy(2, 10.0),
     [("c", BOT, 0.0), ("c", BOT, 5.0), ("c", BOT, 9.0), ("c", BOT, 10.0), ("c", BOT, 11.0)],
     [True, True, False, True, False]),
    ("refusals-not-counted", LoopPolicy(1, 10.0),
     [("c", BOT, 0.0), ("c", BOT, 5.0), ("c", BOT, 9.9), ("c", BOT, 10.0)],
     [True, False, False, True]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "events", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in LOOP_CASES],
)
def test_loop_guard(
    policy: LoopPolicy, events: list[tuple[str, bool, float]], expected: list[bool]
) -> None:
    guard = BotLoopGuard(policy)
    got = [guard.check(chat_key=c, sender_is_bot=b, now=t) for c, b, t in events]
    assert got == expected


@pytest.mark.parametrize(("turns", "window"), [(0, 60.0), (-1, 60.0), (3, 0.0), (3, -5.0)])
def test_loop_policy_validation(turns: int, window: float) -> None:
    with pytest.raises(ValueError, match=r"max_bot_turns|window_s"):
        LoopPolicy(turns, window)


def test_loop_guard_memory_is_bounded() -> None:
    guard = BotLoopGuard(LoopPolicy(1, 60.0), max_chats=4)
    for i in range(100):
        assert guard.check(chat_key=f"c{i}", sender_is_bot=True, now=float(i))
    assert guard.tracked_chats() == 4
    # The most recent chat is still tracked, so its second bot turn is refused.
    assert not guard.check(chat_key="c99", sender_is_bot=True, now=100.0)
    guard.check(chat_key="c99", sender_is_bot=False, now=101.0)
    assert guard.tracked_chats() == 3


@settings(max_examples=50)
@given(st.lists(st.tuples(st.booleans(), st.floats(0.0, 5.0)), max_size=80))
def test_bot_turns_in_any_window_never_exceed_limit(events: list[tuple[bool, float]]) -> None:
    policy = LoopPolicy(3, 10.0)
    guard = BotLoopGuard(policy)
    now = 0.0
    allowed_bot_times: list[float] = []
    last_human = -1.0
    for is_bot, step in events:
        now += step
        ok = guard.check(chat_key="c", sender_is_bot=is_bot, now=now)
        if not is_bot:
            assert ok
            last_human = now
            allowed_bot_times.clear()
        elif ok:
            allowed_bot_times.append(now)
        recent = [t for t in allowed_bot_times if t > now - policy.window_s and t >= last_human]
        assert len(recent) <= policy.max_bot_turns


OUTCOME_CASES = [
    (None, OutcomeKind.EMPTY),
    ("", OutcomeKind.EMPTY),
    ("   \n\t", OutcomeKind.EMPTY),
    ("[tool_calls: search_web]", OutcomeKind.EMPTY),
    ("  [tool_calls:a,b]  ", OutcomeKind.EMPTY),
    ("NO_REPLY", OutcomeKind.SILENCE),
    ("  NO_REPLY\n", OutcomeKind.SILENCE),
    ("[SILENT]", OutcomeKind.SILENCE),
    ("no_reply", OutcomeKind.TEXT),
    ("NO_REPLY because reasons", OutcomeKind.TEXT),
    ("Here is your answer.", OutcomeKind.TEXT),
    ("tool_calls: is a word", OutcomeKind.TEXT),
]


@pytest.mark.parametrize(("text", "kind"), OUTCOME_CASES)
def test_classify_final(text: str | None, kind: OutcomeKind) -> None:
    assert classify_final(text) is kind


def test_custom_markers() -> None:
    markers = frozenset({"<quiet>"})
    assert classify_final("<quiet>", markers) is OutcomeKind.SILENCE
    assert classify_final("NO_REPLY", markers) is OutcomeKind.TEXT
    assert classify_final("  ", frozenset({""})) is OutcomeKind.EMPTY


@pytest.mark.parametrize("language", ["en", "de", "es", "fr", "ru"])
def test_defaults_and_fallback(language: str) -> None:
    from chatgate.model.text_ids import TextId
    from chatgate.texts import LANGUAGES

    assert frozenset({"NO_REPLY", "[SILENT]"}) == SILENCE_MARKERS
    fallback = LANGUAGES[language][TextId.EMPTY_REPLY]  # what an empty answer is replaced by
    assert isinstance(fallback, str) and fallback.strip()
    assert classify_final(fallback) is OutcomeKind.TEXT
