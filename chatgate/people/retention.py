"""`retention:` at work: transcripts and journal content older than each channel's days are
purged in the background, a bounded batch at a time, each pass audited."""

from __future__ import annotations

import asyncio
import logging

from chatgate.clock import Clock
from chatgate.config.retention_models import DAY_S
from chatgate.feature.ports import LiveConfig
from chatgate.model.errors import StateUnavailable
from chatgate.model.reasons import PrivacyReason
from chatgate.state.personal import AuditRecord, PersonalStores

log = logging.getLogger("chatgate.privacy")
MAX_STEPS = 1000  # batches per channel and pass; the rest waits for the next pass
BY = "retention"


async def purge_once(backend: PersonalStores, live: LiveConfig, clock: Clock) -> dict[str, int]:
    """One pass over every channel with a retention: purged lines and entries, by channel."""
    config = live.loaded.config.retention
    purged: dict[str, int] = {}
    for channel in sorted(set(live.loaded.channels) | set(config.channels)):
        days = config.days_for(channel)
        if days is None:
            continue
        cutoff = clock.time() - days * DAY_S
        total = 0
        for _ in range(MAX_STEPS):
            step = await backend.expire(channel, cutoff, config.batch)
            total += step
            if step < config.batch:
                break
            await asyncio.sleep(0)  # a bounded step, then let the message path run
        if total:
            purged[channel] = total
            record = AuditRecord(clock.time(), PrivacyReason.RETENTION.value, f"{channel}:*", BY,
                                 {"purged": total})  # fmt: skip
            await backend.audit(record)
            log.info("retention purge", extra={"channel": channel, "purged": total})
    return purged


async def run_forever(backend: PersonalStores, live: LiveConfig, clock: Clock) -> None:
    """Purge every ``retention.every_s`` until cancelled; a store outage waits for the next pass."""
    while True:
        try:
            await purge_once(backend, live, clock)
        except StateUnavailable as exc:
            log.warning("retention purge skipped: %s", exc)
        await clock.sleep(live.loaded.config.retention.every_s)
