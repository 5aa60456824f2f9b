"""Burst decisions: which waiting messages form one turn, and how long to wait for more."""

from __future__ import annotations

import pytest

from chatgate.policies.bursts import album_run, album_turn, burst_size, burst_wait


@pytest.mark.parametrize(
    ("senders", "size"),
    [([], 0), ([None, "a"], 0), (["a"], 1), (["a", "a", "a"], 3), (["a", "a", "b", "a"], 2),
     (["a", None, "a"], 1)],
)  # fmt: skip
def test_burst_size(senders: list[str | None], size: int) -> None:
    assert burst_size(senders) == size


@pytest.mark.parametrize(
    ("newest_at", "now", "window", "wait"),
    [(10.0, 10.0, 0.8, 0.8), (10.0, 10.5, 0.8, 0.3), (10.0, 11.0, 0.8, 0.0),
     (10.0, 10.0, 0.0, 0.0)],
)  # fmt: skip
def test_burst_wait(newest_at: float, now: float, window: float, wait: float) -> None:
    assert burst_wait(newest_at, now, window) == pytest.approx(wait)


@pytest.mark.parametrize(
    ("albums", "addressed", "run", "turn"),
    [([], [], 0, 0), ([None, "a"], [False, True], 0, 0), (["a"], [False], 1, 0),
     (["a", "a"], [False, True], 2, 2), (["a", "a", "a"], [True, False, False], 3, 3),
     (["a", "a", "b"], [False, False, True], 2, 0), (["a", None, "a"], [False, True, True], 1, 0),
     (["a", "a", "b"], [False, True, True], 2, 2)],
)  # fmt: skip
def test_album_parts_before_the_addressed_one_join_its_turn(
    albums: list[str | None], addressed: list[bool], run: int, turn: int
) -> None:
    assert album_run(albums) == run
    assert album_turn(albums, addressed) == turn
