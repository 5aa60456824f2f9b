"""Files out to Teams personal chats by file consent: a FileConsentCard, the user's Allow (the
`fileConsent/invoke`), the bytes PUT into the upload session without the bot token, then a
FileInfoCard; Decline uploads nothing; the stored reply file is removed either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.channels.teams import consent
from tests.channels.teams.agents import PNG
from tests.channels.teams.support import endpoint, teams_config
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import FakeTeams, Sent
from tests.harness import channel_status, running
from tests.support.waiting import eventually

CONSENT = "application/vnd.microsoft.teams.card.file.consent"
INFO = "application/vnd.microsoft.teams.card.file.info"


def _outgoing(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "state" / "outgoing"
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


async def test_a_file_in_a_personal_chat_is_offered_then_uploaded_on_allow(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm, agent="files")) as gw:
        await ms.post(endpoint(gw), ms.message("chart please", activity_id="4601"))
        [text, card] = await ms.wait_sent(2)
        offer = card.attachment(CONSENT)
        assert offer is not None, card.activity
        status, _ = await ms.post(endpoint(gw), ms.consent(card, accept=True))
        [*_, info] = await ms.wait_sent(3)
        closed = await ms.wait_update(card.id)
        [(session, uploaded)] = ms.uploads.items()
        await eventually(lambda: _outgoing(tmp_path) == [])
        counters = channel_status(gw, "teams")["file_offers"]
    assert text.text == "Here is the chart."
    assert offer["name"] == "chart.png"
    assert offer["content"]["sizeInBytes"] == len(PNG)
    assert offer["content"]["description"] == "Q3"
    assert status == 200
    assert bytes(uploaded) == PNG and ms.upload_auth == [False]  # no bot token to OneDrive
    shown = info.attachment(INFO)
    assert shown is not None and shown["name"] == "chart.png"
    assert shown["contentUrl"].endswith(f"/{session}/chart.png")
    assert shown["content"] == {"uniqueId": f"unique-{session}", "fileType": "png"}
    assert counters["offered"] == counters["accepted"] == 1
    assert answered(closed) == "📎 chart.png: sent."


async def test_a_declined_file_is_not_uploaded_and_is_removed(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm, agent="files")) as gw:
        await ms.post(endpoint(gw), ms.message("chart please", activity_id="4701"))
        [_, card] = await ms.wait_sent(2)
        assert len(_outgoing(tmp_path)) == 1  # the file the card offers
        status, _ = await ms.post(endpoint(gw), ms.consent(card, accept=False))
        closed = await ms.wait_update(card.id)
        await eventually(lambda: _outgoing(tmp_path) == [])
        counters = channel_status(gw, "teams")["file_offers"]
    assert status == 200 and ms.uploads == {}
    assert [s.method for s in ms.messages()] == ["POST", "POST", "PUT"]
    assert counters["declined"] == 1
    assert answered(closed) == "📎 chart.png: declined, not sent."


def answered(update: Sent) -> str:
    """The text of a consent card replaced by its outcome: a card without buttons."""
    assert update.attachment(CONSENT) is None, update.activity
    card = update.card
    assert card is not None and not card.get("actions"), update.activity
    [block] = card["body"]
    return str(block["text"])


async def test_a_card_answered_from_another_chat_is_not_honoured(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm, agent="files")) as gw:
        await ms.post(endpoint(gw), ms.message("chart please", activity_id="4801"))
        [_, card] = await ms.wait_sent(2)
        elsewhere = ms.consent(card, accept=True)
        elsewhere["conversation"]["id"] = "a:1someone-else"
        status, _ = await ms.post(endpoint(gw), elsewhere)
    assert status == 200 and ms.uploads == {} and len(ms.messages()) == 2


@pytest.mark.parametrize(
    ("size", "piece", "expected"),
    [
        (5, 2, [(0, 1), (2, 3), (4, 4)]),
        (4, 2, [(0, 1), (2, 3)]),
        (1, consent.PIECE_BYTES, [(0, 0)]),
    ],
)
def test_upload_pieces(size: int, piece: int, expected: list[tuple[int, int]]) -> None:
    assert consent.pieces(size, piece) == expected
    assert consent.PIECE_BYTES % 327_680 == 0
