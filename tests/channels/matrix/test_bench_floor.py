"""The bench's Matrix floor (a bare mautrix bot) answers a DM in reply, on the real Synapse."""

from __future__ import annotations

from pathlib import Path

from bench.procs import PYTHON, AnnouncedProc, started
from tests.channels.matrix.support import Person
from tests.support.synapse import MatrixUser, Synapse


async def test_the_floor_joins_and_answers_in_reply(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person
) -> None:
    argv = [PYTHON, "-m", "bench.floors.mautrix_echo", "--homeserver", synapse.base_url]
    argv += ["--user-id", bot.user_id, "--access-token", bot.access_token, "--mode", "echo"]
    async with started(AnnouncedProc("matrix-floor", argv, tmp_path / "floor.log")):
        room = await alice.dm(bot.user_id)
        await alice.wait_joined(room, bot.user_id)
        asked = await alice.send(room, "hello floor")
        [answer] = await alice.answers(bot.user_id, room)
    assert answer["content"]["body"] == "hello floor"
    assert answer["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == asked
