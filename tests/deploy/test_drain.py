"""Stopping: a turn in flight at SIGTERM is answered before the process ends, requests arriving
while it drains get a 503 with Retry-After (the sender or the load balancer retries elsewhere),
and every recipe gives the drain more time than it needs."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from chatgate.cli.service_unit import render_unit
from chatgate.config.models import GatewaySection
from tests.deploy.test_manifests import WORKLOADS, pod
from tests.harness import http, memory, running, url, write_config
from tests.support.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]


async def test_a_turn_in_flight_is_answered_and_new_requests_get_retry_after(
    tmp_path: Path,
) -> None:
    path = write_config(
        tmp_path,
        """agents:
  default: {backend: echo, prefix: "re: ", delay_s: 1.0}
channels:
  memory: {dm_policy: open}
  webhook:
    routes:
      open: {path: /hooks/open, signature: none}
""",
    )
    async with running(path) as gw, http() as client:
        chat = memory(gw)
        submitted = await chat.inject("slow one", message_id="d1")
        await asyncio.sleep(0.2)  # the agent is working
        stopping = asyncio.ensure_future(gw.stop())  # what SIGTERM starts
        for _ in range(100):
            if gw.life.draining:
                break
            await asyncio.sleep(0.01)
        async with client.post(url(gw, "/hooks/open"), json={"text": "late"}) as r:
            assert r.status == 503
            assert r.headers["Retry-After"].isdigit()
        await stopping
        await submitted.result
    assert chat.texts() == ["re: slow one"]


async def test_a_channel_still_starting_when_draining_begins_takes_no_input(
    tmp_path: Path,
) -> None:
    """The drain stops every channel's intake; one whose (slow) start returns after that must
    not begin polling then, or it takes messages the stopping gateway will not answer."""
    path = write_config(tmp_path, "channels:\n  memory: {dm_policy: open}\n")
    async with running(path) as gw:
        chat = memory(gw)
        chat.start_gate = asyncio.Event()
        await gw.channels.restart("memory")
        await eventually(lambda: chat.started == 2, what="a second, slow start")
        await gw.channels.stop_intake()
        assert not chat.intake_stopped  # nothing to stop yet: it is still starting
        chat.start_gate.set()
        await eventually(lambda: chat.intake_stopped, what="intake stopped after the start")


def test_every_recipe_waits_longer_than_the_drain() -> None:
    drain = GatewaySection().drain_timeout_s
    readme = (ROOT / "docs" / "deployment.md").read_text()
    docker = re.findall(r"--stop-timeout (\d+)", readme)
    assert docker and all(int(t) > drain for t in docker)  # docker's 10 s default kills a turn
    unit = re.search(r"^TimeoutStopSec=(\d+)$", render_unit(), re.M)
    assert unit is not None and int(unit.group(1)) > drain
    for manifest in WORKLOADS:
        assert pod(manifest)["terminationGracePeriodSeconds"] > drain + 5  # + the preStop pause
