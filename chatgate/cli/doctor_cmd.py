"""`chatgate doctor [--fix] [--offline] [--json] [--only ID] [--skip ID] [--strict]`: check a
deployment before (or while) it runs.

Config validity and version, the state directory, credentials, and each platform and model with
one real API call (getMe; a one-token completion). Every problem comes with the fix; ``--fix``
applies the safe ones (config migration with a .bak, creating the state directory). No secret
value is ever printed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path

from chatgate.agents.base import AgentError, Turn
from chatgate.cli.common import config_path
from chatgate.cli.doctor_mcp import check_mcp_servers
from chatgate.cli.doctor_redis import check_redis
from chatgate.cli.doctor_report import (
    CONFIG_CHECK,
    as_json,
    config_free,
    exit_code,
    render,
    select,
)
from chatgate.cli.doctor_supply import check_supply_chain
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.errors import EX_CONFIG, ConfigError
from chatgate.config.findings import Finding, Level
from chatgate.config.loader import LoadedConfig, load_config
from chatgate.config.migrate import migrate_file
from chatgate.config.redact import scrub
from chatgate.model.chat import ChatMessage
from chatgate.model.reasons import FailureReason

PROBE_TIMEOUT_S = 20.0
_REACHABLE = frozenset(  # the model answered: it is reachable, the request itself was refused
    {FailureReason.CONTEXT_OVERFLOW, FailureReason.FORMAT_ERROR}
)
_BUSY = frozenset({FailureReason.RATE_LIMIT, FailureReason.OVERLOADED})


async def diagnose(path: Path, *, fix: bool = False, offline: bool = False) -> list[Finding]:
    """Every finding, in order; the config ones first. On an invalid config only the checks of
    the interpreter itself (the supply chain) run: every other one needs the config."""
    from chatgate.channels.registry import ChannelRegistry

    findings = [_migration(path, fix)]
    try:
        loaded = load_config(path, catalog=ChannelRegistry())
    except ConfigError as exc:
        findings.append(
            Finding(
                CONFIG_CHECK,
                Level.FAIL,
                str(exc),
                f"edit {path} at the line named, then run `chatgate config check`",
            )
        )
        return findings + await asyncio.to_thread(check_supply_chain)
    findings.append(Finding(CONFIG_CHECK, Level.OK, f"{path} is valid"))
    findings += [Finding("config.warning", Level.WARN, w) for w in loaded.warnings]
    findings.append(await asyncio.to_thread(_state_dir, loaded, fix))
    findings += await asyncio.to_thread(_jobs, loaded)
    findings += await _channels(loaded, offline)
    findings += await _agents(loaded, offline)
    findings += await check_redis(loaded.config.gateway, offline)
    findings += await check_mcp_servers(loaded.config.mcp_servers, offline)
    findings += await asyncio.to_thread(check_supply_chain)
    # Defence in depth: an SDK message that quotes a credential must not reach the terminal.
    secrets = loaded.secrets
    return [
        dataclasses.replace(f, detail=scrub(f.detail, secrets), fix=scrub(f.fix, secrets))
        for f in findings
    ]


def run_doctor(
    given: str | None,
    *,
    fix: bool,
    offline: bool,
    json_out: bool = False,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    strict: bool = False,
) -> int:
    path = config_path(given)
    if not path.exists():
        hint = f"pass --config PATH or create {path} (see README, Configuration)"
        findings = [Finding(CONFIG_CHECK, Level.FAIL, f"{path}: no such file", hint)]
        findings += check_supply_chain()
    else:
        findings = asyncio.run(diagnose(path, fix=fix, offline=offline))
    shown = select(findings, only=only, skip=skip)
    broken = [f for f in findings if f.check == CONFIG_CHECK and f.level is Level.FAIL]
    if broken and not config_free(only):
        # Shown whatever the filter, as the reason for exit 78: the checks asked for need it.
        shown = [*broken, *(f for f in shown if f.check != CONFIG_CHECK)]
        code = EX_CONFIG
    else:
        code = exit_code(shown, strict=strict)
    print(as_json(shown, code) if json_out else render(shown))
    return code


# -- checks ---------------------------------------------------------------------------------


def _migration(path: Path, fix: bool) -> Finding:
    try:
        pending = migrate_file(path, dry_run=not fix)
    except (ValueError, OSError) as exc:
        return Finding("config.version", Level.FAIL, f"cannot read {path}: {exc}")
    if not pending.applied:
        return Finding("config.version", Level.OK, "current")
    what = "; ".join(pending.applied)
    if fix:
        return Finding("config.version", Level.OK, f"migrated ({what}); saved {pending.backup}")
    return Finding(
        "config.version",
        Level.WARN,
        f"outdated: {what}",
        "run `chatgate config migrate`",
        key="version",
    )


def _state_dir(loaded: LoadedConfig, fix: bool) -> Finding:
    """The state directory exists (or, with --fix, is created), is writable and holds SQLite."""
    directory = loaded.state_dir
    fix_hint = f"make {directory} writable by this user, or set gateway.state_dir"
    key = "gateway.state_dir"
    if not directory.exists():
        if not fix:
            return Finding(
                "state.dir",
                Level.WARN,
                f"{directory} does not exist yet (the daemon creates it)",
                "run `chatgate doctor --fix` to create it now",
            )
        try:
            directory.mkdir(parents=True)
        except OSError as exc:
            return Finding(
                "state.dir", Level.FAIL, f"cannot create {directory}: {exc}", fix_hint, key=key
            )
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
            pass
        sqlite3.connect(directory / ".doctor.db").close()
        os.unlink(directory / ".doctor.db")
    except (OSError, sqlite3.Error) as exc:
        return Finding(
            "state.dir", Level.FAIL, f"{directory} is not writable: {exc}", fix_hint, key=key
        )
    return Finding("state.dir", Level.OK, f"{directory} is writable")


def _jobs(loaded: LoadedConfig) -> list[Finding]:
    """Scheduled jobs that cannot deliver (unknown agent or target, dead target), as the running
    daemon sees them (runtime jobs and dead targets live in its state)."""
    from chatgate.cli.api_client import DaemonUnreachable, request

    configured = len(loaded.config.schedules)
    try:
        jobs = request(loaded, "/api/jobs").get("jobs")
    except (DaemonUnreachable, SystemExit):  # not running, or it refused the token
        jobs = None
    if not isinstance(jobs, list):
        if not configured:
            return []
        detail = f"{configured} job(s) in the config; daemon not running: dead targets unchecked"
        return [Finding("schedules", Level.OK, detail)]
    findings = [
        Finding(
            f"schedules.{job['id']}",
            Level.WARN,
            f"job {job['id']}: {problem}",
            "fix deliver.to (or revive the chat: it must write to the bot, or "
            "`chatgate dlq replay`), or remove the job",
        )
        for job in jobs
        for problem in job.get("problems", [])
    ]
    if findings or not jobs:
        return findings
    return [Finding("schedules", Level.OK, f"{len(jobs)} job(s) can deliver")]


async def _channels(loaded: LoadedConfig, offline: bool) -> list[Finding]:
    """Each enabled channel's own check, from its descriptor (plugins without one are listed)."""
    from chatgate.channels.registry import ChannelRegistry

    registry = ChannelRegistry()
    out: list[Finding] = []
    for name, section in loaded.channels.items():
        if not section.enabled:
            continue
        check = registry.descriptor(section.platform).doctor_check()
        if check is None:
            out.append(Finding(name, Level.SKIP, f"{section.platform} channel: no doctor check"))
            continue
        out += await check(name, section.config, offline)
    return out


async def _agents(loaded: LoadedConfig, offline: bool) -> list[Finding]:
    from chatgate.agents.registry import build_agents

    try:
        built = build_agents(loaded.config)
    except ConfigError as exc:  # a python agent whose module does not import
        return [
            Finding("agent.load", Level.FAIL, str(exc), "fix the module path or its import error")
        ]
    out: list[Finding] = []
    for name, config in loaded.config.agents.items():
        await built[name].aclose()
        if not isinstance(config, LiteLLMAgentConfig):
            detail = f"{config.backend} backend loads (not called: a call would run a turn)"
            out.append(Finding(f"agent.{name}.backend", Level.OK, detail))
            continue
        models = [(config.model, config.api_base, config.api_key)]
        models += [(f.model, f.api_base or config.api_base, f.api_key) for f in config.fallbacks]
        for index, (model, base, key) in enumerate(models):
            where = "" if index == 0 else f".fallbacks.{index - 1}"
            probe = config.model_copy(
                update={
                    "model": model,
                    "api_base": base,
                    "api_key": key or config.api_key,
                    "fallbacks": [],
                    "max_tokens": 1,
                    "stream": False,
                    "system_prompt": None,
                    "timeout_s": min(config.timeout_s, PROBE_TIMEOUT_S),
                }
            )
            out.append(await _model(name, probe, offline, f"agent.{name}{where}.key"))
    return out


async def _model(name: str, config: LiteLLMAgentConfig, offline: bool, check: str) -> Finding:
    from chatgate.agents.litellm_agent import LiteLLMAgent

    where = f"{config.model}" + (f" at {config.api_base}" if config.api_base else "")
    agent = LiteLLMAgent(name, config)
    turn = Turn(session="doctor", history=(), new=(ChatMessage("user", "ping"),))
    try:
        agent.require_keys()
        if offline:
            return Finding(check, Level.SKIP, f"{where}: key present; not called (--offline)")
        await agent.run(turn)
    except AgentError as exc:
        return _model_failure(name, check, where, exc)
    return Finding(check, Level.OK, f"{where} answered")


def _model_failure(name: str, check: str, where: str, exc: AgentError) -> Finding:
    reason = exc.reason
    detail = f"{where}: {reason.value} ({exc.detail})" if exc.detail else f"{where}: {reason.value}"
    if reason in _REACHABLE:
        return Finding(check, Level.OK, f"{where} answered (it refused the probe: {reason.value})")
    if reason in _BUSY:
        return Finding(check, Level.WARN, detail, "the provider is busy; turns may fail for now")
    fixes = {
        FailureReason.MISSING_KEY: f"set agents.{name}.api_key or api_key_file (or the provider's "
        "environment variable)",
        FailureReason.AUTH_PERMANENT: f"check agents.{name}.api_key and its access to the model",
        FailureReason.AUTH_EXPIRED: f"renew the key in agents.{name}.api_key",
        FailureReason.MODEL_NOT_FOUND: f"check agents.{name}.model (and fallbacks)",
        FailureReason.PROVIDER_QUOTA: "top up the provider account or raise its quota",
    }
    return Finding(
        check,
        Level.FAIL,
        detail,
        fixes.get(reason, f"check network access and agents.{name}.api_base"),
        key=f"agents.{name}.api_key",
    )
