"""Schedules as a feature: the scheduler's loop, `/jobs` in chat, the jobs and send API, the
route hints of its runs, its section of `/api/status`, and the agents' schedule tools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from chatgate.config.loader import LoadedConfig
from chatgate.config.models import GatewaySection
from chatgate.feature.base import Feature
from chatgate.feature.context import FeatureContext
from chatgate.feature.intake import CommandHandler, HintSource
from chatgate.feature.ports import RouteTable
from chatgate.model.errors import StateUnavailable
from chatgate.schedules.agent_jobs import AgentJobs
from chatgate.schedules.api import JobsApi, jobs_status
from chatgate.schedules.chat import JOBS_COMMAND, jobs_command
from chatgate.schedules.personal import OwnedJobs
from chatgate.schedules.runner import Scheduler
from chatgate.schedules.store import DB_FILE, JobStore, SqliteJobStore
from chatgate.state.personal import PersonalData


class Schedules(Feature):
    name = "schedules"

    def __init__(self, context: FeatureContext) -> None:
        loaded = context.loaded
        self.scheduler = Scheduler(
            context, job_store(loaded.config.gateway, loaded, context.state.stores.client)
        )
        self.voices = context.voices
        self.owned = OwnedJobs(self.scheduler, context.routing.principal_of)
        if context.tools is not None:  # the agents' gateway.schedule tools
            context.tools.hub.jobs = AgentJobs(self.scheduler, context.routing.principal_of)

    def commands(self) -> Mapping[str, CommandHandler]:
        return {JOBS_COMMAND: partial(jobs_command, self.scheduler, self.voices)}

    def hint_sources(self) -> Sequence[HintSource]:
        return (self.scheduler.hint,)

    def personal_data(self) -> Sequence[PersonalData]:
        return (self.owned,)

    def mount(self, routes: RouteTable) -> None:
        JobsApi(self.scheduler).mount(routes)

    async def open(self) -> None:
        await self.scheduler.open()

    async def start(self) -> None:
        self.scheduler.start()

    async def stop(self) -> None:
        await self.scheduler.stop()

    async def close(self) -> None:
        await self.scheduler.close()

    def apply_config(self, loaded: LoadedConfig) -> None:
        self.scheduler.apply_config()

    async def status(self) -> Mapping[str, Any]:
        try:
            return {"jobs": await jobs_status(self.scheduler)}
        except StateUnavailable as exc:
            return {"jobs": [], "state_errors": [str(exc)]}


def job_store(gateway: GatewaySection, loaded: LoadedConfig, client: object = None) -> JobStore:
    """The job store on the gateway's state backend; ``client``: the stores' connection
    client, shared rather than a pool of its own."""
    if gateway.store.backend == "redis":
        from chatgate.schedules.store_redis import RedisJobStore  # only replicas load redis

        return RedisJobStore(gateway, client)
    return SqliteJobStore(loaded.state_dir / DB_FILE)
