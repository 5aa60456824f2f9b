"""A job as the scheduler sees it (config or runtime), and one line of a job's run history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from chatgate.config.cron import Cron
from chatgate.config.schedule_models import ScheduleConfig
from chatgate.model.messages import Target
from chatgate.policies.schedules import Every, Once, Timing

JobSource = Literal["config", "api", "chat"]


@dataclass(frozen=True)
class ScheduledJob:
    """``config`` jobs come from gateway.yaml (reconciled on reload); ``api`` and ``chat`` jobs
    live in the job store; a ``chat`` job belongs to ``owner`` (channel:sender_id)."""

    id: str
    spec: ScheduleConfig
    source: JobSource = "config"
    owner: str | None = None
    created_at: float = 0.0

    @property
    def timing(self) -> Timing:
        spec = self.spec
        if spec.cron is not None:
            return Cron(spec.cron, spec.tz)
        if spec.every_s is not None:
            return Every(spec.every_s)
        assert spec.at is not None
        return Once(spec.at.timestamp())

    @property
    def targets(self) -> list[Target]:
        return [Target.parse(to) for to in self.spec.deliver.to]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "spec": self.spec.model_dump(mode="json", exclude_defaults=True),
            "source": self.source,
            "owner": self.owner,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScheduledJob:
        return cls(
            str(data["id"]),
            ScheduleConfig.model_validate(data["spec"]),
            data.get("source", "api"),
            data.get("owner"),
            float(data.get("created_at", 0.0)),
        )


@dataclass(frozen=True)
class RunRecord:
    """One decision about a job's instant: run here (with the journal keys of its runs, one per
    target), skipped by the misfire policy (``count`` instants), or held back (reason)."""

    instant: float
    reason: str
    at: float
    replica: str = ""
    keys: list[str] = field(default_factory=list)
    count: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "instant": self.instant,
            "reason": self.reason,
            "at": self.at,
            "replica": self.replica,
            "keys": list(self.keys),
            "count": self.count,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        return cls(
            float(data["instant"]),
            str(data["reason"]),
            float(data["at"]),
            str(data.get("replica", "")),
            [str(k) for k in data.get("keys", [])],
            int(data.get("count", 1)),
        )
