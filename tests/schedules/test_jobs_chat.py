"""`/jobs` in chat through a real Gateway: a user lists and removes their own jobs, in their
channel's language, and never sees another user's."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.clock import ManualClock
from tests.harness import http, memory, operator, running, url
from tests.schedules.test_scheduler import T0, config


async def test_jobs_lists_and_removes_the_senders_own_jobs_in_their_language(
    tmp_path: Path,
) -> None:
    path = config(tmp_path, "  {}\n", channel="{dm_policy: open, language: de}")
    mine = {"id": "nag", "every_s": 600, "prompt": "drink water", "owner": "memory:u1",
            "deliver": {"to": "memory:u1"}}  # fmt: skip
    theirs = {**mine, "id": "other", "owner": "memory:u2", "deliver": {"to": "memory:u2"}}
    async with running(path, clock=ManualClock(wall_start=T0)) as gw, http() as client:
        for body in (mine, theirs):
            async with client.post(url(gw, "/api/jobs"), json=body, headers=operator(gw)) as r:
                assert r.status == 201, await r.text()
        chat = memory(gw)
        for text in ("/jobs", "/jobs rm other", "/jobs rm nag", "/jobs"):
            await (await chat.inject(text)).result
    listed, not_yours, removed, empty = chat.texts()
    assert listed.split("\n")[0] == "Deine geplanten Aufträge:"
    assert listed.split("\n")[1] == "• nag: every 600s, nächster Lauf 2026-06-01 07:10 UTC"
    assert "other" not in listed
    assert listed.split("\n")[-1] == "Entferne einen mit /jobs rm ID."
    assert not_yours == "Du hast keinen Auftrag namens other."
    assert removed == "nag entfernt."
    assert empty == "Du hast keine geplanten Aufträge."
