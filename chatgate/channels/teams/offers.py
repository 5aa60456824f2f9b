"""The file-consent flow's I/O (see consent.py): a stored reply file for a personal chat is
offered with a FileConsentCard; the user's Allow uploads it to the upload session Teams gives
and posts the FileInfoCard; either answer removes the stored file.

An unanswered file lives as long as a download link would (the outgoing-file store's sweep); a
press after that, or on a replica whose disk does not hold it, is told it is no longer there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import aiohttp

from chatgate.channels.teams import consent
from chatgate.channels.teams.connector import Connector
from chatgate.channels.teams.inbound import Reference
from chatgate.channels.teams.render import card_activity
from chatgate.model.outbound import File
from chatgate.model.text_ids import TextId

log = logging.getLogger("chatgate.teams")


class FileOffers:
    """Offers files in personal chats and completes them when the user answers."""

    def __init__(
        self,
        connector: Connector,
        files: Any,
        session: aiohttp.ClientSession,
        words: Any,
        failed: Callable[[str], None],
    ) -> None:
        self.connector, self.files, self.session, self.words = connector, files, session, words
        self.failed = failed
        self.counters = dict.fromkeys(("offered", "accepted", "declined", "gone"), 0)
        self._tasks: set[asyncio.Task[None]] = set()

    def answer(self, ref: Reference, answer: consent.Answer) -> None:
        """A press on a consent card in ``ref``'s chat (one offered elsewhere is ignored): the
        upload runs after the invoke's 200, since Teams waits only seconds for it."""
        if answer.offer.chat_id != ref.chat_id:
            return
        task = asyncio.create_task(self._complete(ref, answer), name=f"teams-file:{ref.chat_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    async def _complete(self, ref: Reference, answer: consent.Answer) -> None:
        try:
            await self.answered(ref, answer)
        except Exception as exc:
            self.failed(type(exc).__name__)
            log.warning("teams file upload failed", extra={"error": type(exc).__name__})

    async def offer(self, ref: Reference, conversation: str, file: File) -> str:
        """Posts the consent card for the stored ``file``; the card's activity id."""
        offer = consent.Offer(file.ref, file.name, ref.chat_id)
        card = consent.consent_card(file, file.size, offer)
        sent = await self.connector.post(ref, conversation, card)
        self.counters["offered"] += 1
        return sent

    async def answered(self, ref: Reference, answer: consent.Answer) -> None:
        """The user pressed Allow or Decline on one of our cards (in ``ref``'s chat)."""
        offer = answer.offer
        if not answer.accepted:
            self.counters["declined"] += 1
            await self.files.discard_refs([offer.ref])
            await self._close(ref, answer, TextId.FILE_DECLINED)
            return
        try:
            data = await self.files.read(offer.ref)
        except Exception:
            self.counters["gone"] += 1
            gone = self.words.text(TextId.FILE_GONE, name=offer.name)
            await self.connector.post(ref, ref.conversation, {"text": gone})
            await self._close(ref, answer, TextId.FILE_GONE)
            return
        await consent.upload(self.session, answer.upload_url, data)
        await self.connector.post(ref, ref.conversation, consent.info_card(answer))
        self.counters["accepted"] += 1
        await self.files.discard_refs([offer.ref])
        await self._close(ref, answer, TextId.FILE_SENT)

    async def _close(self, ref: Reference, answer: consent.Answer, outcome: TextId) -> None:
        """The consent card replaced by its outcome (its Allow/Decline buttons gone)."""
        if not answer.card_id:
            return
        text = self.words.text(outcome, name=answer.offer.name)
        try:
            await self.connector.update(ref, ref.conversation, answer.card_id, card_activity(text))
        except Exception as exc:  # the answer counts even if the card stays
            log.warning("teams consent card not closed", extra={"error": type(exc).__name__})
