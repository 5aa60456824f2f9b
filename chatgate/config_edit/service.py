"""`ConfigEditor`: read, check and apply gateway.yaml for an operator, safely.

An apply is refused, with the reason and what to do instead, when editing is disabled, the file
cannot be replaced here (a read-only mount, a ConfigMap: GitOps), the file changed on disk since
the page read it (its tag differs: no lost update), the loader refuses the text (issues with key
path and line), or a secret is written in clear. Otherwise the file is replaced atomically (the
previous version kept as `.1`), the daemon's hot reload applies it, and the change is audited in
the state store. A file the reload refuses is put back at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatgate.clock import Clock
from chatgate.config.errors import ConfigError, ConfigIssue, KeyPath, format_path
from chatgate.config.loader import LoadedConfig
from chatgate.config.masking import masker_for
from chatgate.config.models import ConfigEditConfig
from chatgate.config.redact import scrub
from chatgate.config.secrets import is_secret_key
from chatgate.config.source import parse_yaml
from chatgate.config_edit import document, files
from chatgate.config_edit.secrets import at, clear_paths, secret_paths
from chatgate.config_edit.sources import effective_keys
from chatgate.feature.ports import ConfigFiles, LiveConfig
from chatgate.model.errors import StateUnavailable
from chatgate.model.reasons import ConfigEditReason
from chatgate.state.config_audit import KV_NAME, ConfigAudit, ConfigChange
from chatgate.state.factory import State

log = logging.getLogger("chatgate.config_edit")
HISTORY_SHOWN = 20
GITOPS_HINT = (
    "this file is managed outside chatgate: change it where it comes from (its Git repository, "
    "the ConfigMap or the image), roll it out, then run `chatgate reload`; this page can still "
    "check a text and show its diff"
)
RELOAD_PAGE_HINT = "reload the page to see the file as it is now, then make the change again"
NOTHING = document.Summary((), 0, 0, 0)  # the keys of an attempt that names none


class Refused(Exception):
    """A change that was not made, and why."""

    def __init__(
        self,
        status: int,
        reason: ConfigEditReason,
        message: str,
        *,
        hint: str = "",
        issues: Sequence[ConfigIssue] = (),
    ) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message
        self.hint, self.issues = hint, tuple(issues)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": False,
            "error": self.message,
            "reason_code": str(self.reason),
            "hint": self.hint,
            "issues": issues_json(self.issues),
        }


def issues_json(issues: Sequence[ConfigIssue]) -> list[dict[str, Any]]:
    return [
        {"key": format_path(i.path), "line": i.line, "message": i.message, "text": i.render()}
        for i in issues
    ]


@dataclass(frozen=True)
class Checked:
    """A text the loader accepts: what would be written (hidden secrets put back) and its diff
    against the file on disk (secrets masked)."""

    final: str
    disk: files.OnDisk
    diff: str
    summary: document.Summary
    warnings: Sequence[str] = field(default_factory=tuple)


def _invalid(exc: ConfigError) -> Refused:
    return Refused(422, ConfigEditReason.INVALID, exc.render(), issues=exc.issues)


class ConfigEditor:
    """Over the live config, the state store (the audit trail), a clock and the daemon's way to
    validate and reload (the CLI without a daemon gives one that only validates)."""

    def __init__(self, live: LiveConfig, state: State, clock: Clock, port: ConfigFiles) -> None:
        self.live, self.state, self.clock, self.port = live, state, clock, port
        self._lock = asyncio.Lock()

    @property
    def loaded(self) -> LoadedConfig:
        return self.live.loaded

    @property
    def path(self) -> Path:
        return self.loaded.path

    @property
    def settings(self) -> ConfigEditConfig:
        return self.loaded.config.gateway.config_edit

    @property
    def audit(self) -> ConfigAudit:
        store: ConfigAudit = self.state.stores.kv[KV_NAME]  # type: ignore[assignment]
        return store

    def _hide(self, text: str, *more: LoadedConfig) -> str:
        secrets = self.loaded.secrets.union(*(m.secrets for m in more))
        return masker_for(secrets).mask(text)

    async def _read(self) -> files.OnDisk:
        try:
            return await asyncio.to_thread(files.read, self.path)
        except (OSError, UnicodeDecodeError) as exc:
            message = f"cannot read {self.path.name}: {getattr(exc, 'strerror', None) or exc}"
            raise Refused(409, ConfigEditReason.NOT_WRITABLE, message, hint=GITOPS_HINT) from None

    def masked(self, disk: files.OnDisk) -> str:
        """The file as the browser may see it: every clear secret masked."""
        raw = _parsed(disk.text, self.path.name)
        paths = secret_paths(self.loaded) | set(_secret_keys(raw))
        try:
            text = document.mask(disk.text, clear_paths(raw, paths), self.path.name)
        except ConfigError:  # edited by hand into YAML only one parser reads: known secrets go
            text = disk.text
        return self._hide(text)

    async def refusal(self) -> Refused | None:
        """Why an apply would be refused whatever the text (None: it would be tried)."""
        if not self.settings.enabled:
            message = "editing the config here is off (gateway.config_edit.enabled: false)"
            return Refused(403, ConfigEditReason.DISABLED, message, hint=GITOPS_HINT)
        problem = await asyncio.to_thread(files.unwritable, self.path)
        if problem is not None:
            message = f"{self.path.name} cannot be changed here: {problem}"
            return Refused(409, ConfigEditReason.NOT_WRITABLE, message, hint=GITOPS_HINT)
        return None

    async def view(self) -> dict[str, Any]:
        """What the Config page shows."""
        disk = await self._read()
        refusal = await self.refusal()
        keep = self.settings.backups
        kept = await asyncio.to_thread(files.backups, self.path, keep)
        return {
            "path": str(self.path),
            "name": self.path.name,
            "etag": disk.etag,
            "text": self.masked(disk),
            "writable": refusal is None,
            "refusal": refusal.to_json() if refusal is not None else None,
            "keys": effective_keys(self.loaded, disk.text),
            "backups": [{"number": n, "name": f"{self.path.name}.{n}", "at": t} for n, t in kept],
            "history": [c.to_json() for c in await self.recent(HISTORY_SHOWN)],
        }

    async def recent(self, limit: int) -> list[ConfigChange]:
        try:
            return await self.audit.recent(limit)
        except StateUnavailable:
            return []

    async def check(self, text: str) -> Checked:
        """``text`` as it would be written, validated by the daemon's own loader; `Refused`
        with the issues (key path and line) when it is not acceptable."""
        disk = await self._read()
        name = self.path.name
        on_disk = _parsed(disk.text, name)
        hide = masker_for(self.loaded.secrets).mask
        try:
            final = document.unmask(text, disk.text, name, hide)
            loaded = await asyncio.to_thread(self.port.validate, final, self.path)
        except ConfigError as exc:
            raise _invalid(exc) from None
        written = parse_yaml(final, name)
        fresh = [
            p
            for p in clear_paths(written.data, secret_paths(loaded))
            if at(written.data, p) != at(on_disk, p)
        ]
        if fresh:
            issues = [written.issue(p, _clear_message(p)) for p in fresh]
            message = "secrets can be set here only as ${VAR} references or *_file paths"
            raise Refused(422, ConfigEditReason.CLEAR_SECRET, message, issues=issues)
        shown = self._hide(document.diff(self.masked(disk), text, label=name), loaded)
        return Checked(final, disk, shown, document.summary(disk.text, final), loaded.warnings)

    async def apply(self, text: str, etag: str, *, address: str, by: str) -> dict[str, Any]:
        """Write ``text`` (read at ``etag``) and reload; the outcome for the page. A refusal
        is audited with the keys the text would have changed."""
        async with self._lock:
            try:
                return await self._apply(text, etag, address=address, by=by)
            except Refused as refused:
                keys = await self._attempted(text)
                await self._refused(refused, "apply", keys, address=address, by=by)
                raise

    async def _apply(self, text: str, etag: str, *, address: str, by: str) -> dict[str, Any]:
        refusal = await self.refusal()
        if refusal is not None:
            raise refusal
        disk = await self._read()
        if etag == disk.etag:
            checked = await self.check(text)  # reads the file again: compare that reading
            if checked.disk.etag == etag:
                return await self._replace(checked.final, checked.disk, "apply", address, by)
        message = f"{self.path.name} was changed on disk after this page read it"
        raise Refused(409, ConfigEditReason.CHANGED_ON_DISK, message, hint=RELOAD_PAGE_HINT)

    async def rollback(self, number: int, *, address: str, by: str) -> dict[str, Any]:
        """Put back kept version ``number`` (1: the newest) and reload; a refusal is audited."""
        async with self._lock:
            try:
                return await self._rollback(number, address=address, by=by)
            except Refused as refused:
                action = f"rollback to {files.backup_path(self.path, number).name}"
                await self._refused(refused, action, NOTHING, address=address, by=by)
                raise

    async def _rollback(self, number: int, *, address: str, by: str) -> dict[str, Any]:
        refusal = await self.refusal()
        if refusal is not None:
            raise refusal
        kept = files.backup_path(self.path, number)
        try:
            text = await asyncio.to_thread(kept.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            message = f"no kept version {kept.name} (kept: {self.settings.backups})"
            raise Refused(404, ConfigEditReason.NO_SUCH_BACKUP, message) from None
        try:
            await asyncio.to_thread(self.port.validate, text, self.path)
        except ConfigError as exc:
            raise _invalid(exc) from None
        disk = await self._read()
        return await self._replace(text, disk, f"rollback to {kept.name}", address, by)

    async def _replace(
        self, final: str, disk: files.OnDisk, action: str, address: str, by: str
    ) -> dict[str, Any]:
        if final == disk.text:
            return {"ok": True, "unchanged": True, "etag": disk.etag, "reload": None}
        try:
            backup = await asyncio.to_thread(files.replace, self.path, final, self.settings.backups)
        except OSError as exc:
            message = f"cannot write {self.path.name}: {exc.strerror}"
            raise Refused(409, ConfigEditReason.NOT_WRITABLE, message, hint=GITOPS_HINT) from None
        report = dict(await self.port.reload())
        if not report.get("ok"):
            await asyncio.to_thread(files.write, disk.path, disk.text)
            log.error("config change undone: the reload refused it", extra={"action": action})
            message = (
                "the reload refused the new file, so the previous one was put back: "
                f"{report.get('error')}"
            )
            raise Refused(422, ConfigEditReason.RELOAD_REJECTED, self._hide(message))
        changes = document.summary(disk.text, final)
        change = self._change(
            action,
            changes,
            address=address,
            by=by,
            backup=backup,
            reload={k: v for k, v in report.items() if k != "path"},
        )
        audited = await self._audit(change)
        log.info(
            "config changed", extra={"action": action, "by": by, "address": address,
                                     "keys": ",".join(change.changed)},
        )  # fmt: skip
        return {
            "ok": True,
            "unchanged": False,
            "etag": files.etag_of(final.encode("utf-8")),
            "backup": backup,
            "reload": report,
            "change": {**change.to_json(), "id": audited},
            "audited": audited is not None,
        }

    async def _attempted(self, text: str) -> document.Summary:
        """The keys and lines ``text`` (as the page shows the file: secrets masked) would have
        changed; none when the file cannot be read."""
        try:
            masked = self.masked(await self._read())
        except Refused:
            return NOTHING
        return await asyncio.to_thread(document.summary, masked, text)

    async def _refused(
        self, refused: Refused, action: str, keys: document.Summary, *, address: str, by: str
    ) -> None:
        change = self._change(action, keys, address=address, by=by, refused=str(refused.reason))
        await self._audit(change)
        log.warning(
            "config change refused", extra={"action": action, "by": by, "address": address,
                                            "reason": str(refused.reason)},
        )  # fmt: skip

    def _change(
        self, action: str, keys: document.Summary, *, address: str, by: str, **rest: Any
    ) -> ConfigChange:
        """The audit record of ``action`` (applied or refused): who, from where, which keys."""
        return ConfigChange(
            at=self.clock.time(),
            action=action,
            address=address,
            by=by,
            changed=keys.keys(),
            added_lines=keys.added_lines,
            removed_lines=keys.removed_lines,
            **rest,
        )

    async def _audit(self, change: ConfigChange) -> int | None:
        """The audit record's id; None when the state store is away (the change stands: it is
        written and logged)."""
        try:
            return await self.audit.record(change)
        except StateUnavailable:
            log.error("config change not audited: the state store is unavailable")
            return None

    def scrubbed(self, data: Mapping[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = scrub(dict(data), self.loaded.secrets)
        return answer


def _parsed(text: str, name: str) -> Any:
    try:
        return parse_yaml(text, name).data
    except ConfigError:
        return {}


def _secret_keys(data: Any, path: KeyPath = ()) -> list[KeyPath]:
    """Paths whose key names a credential (`token`, `*_key`, …), for masking a file the running
    config does not describe (edited by hand since)."""
    found: list[KeyPath] = []
    if isinstance(data, dict):
        for key, value in data.items():
            here = (*path, key)
            if is_secret_key(key) and not isinstance(value, dict | list):
                found.append(here)
            found.extend(_secret_keys(value, here))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found.extend(_secret_keys(value, (*path, index)))
    return found


def _clear_message(path: KeyPath) -> str:
    key = path[-1]
    return (
        f"a secret cannot be written in clear from here; use ${{VAR}} (set in the daemon's "
        f"environment) or {key}_file: /path/to/file"
    )
