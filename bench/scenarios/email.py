"""Scenario email: a burst of mail answered by the real daemon vs a bare aioimaplib + aiosmtplib
loop (`bench.floors.mail_echo`) doing the same model call.

One real Dovecot (the test suite's throwaway config) holds a mailbox per subject; each subject
has its own SMTP server (aiosmtpd, in the bench process) recording its answers. A burst is
filed in a staging folder and moved into INBOX with one UID MOVE, so every mail arrives at
once. **mails/s** = mails / (move → last answer); **CPU/mail** = the subject's CPU over the burst
(until it went quiet) / mails. Every mail is from one of 50 senders with its own subject (a new
thread, so a new session for chatgate). The floor, then chatgate, start one at a time and each
answers one mail delivered the moment it is ready (first reply after ready).
"""

from __future__ import annotations

import asyncio
import contextlib
import imaplib
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from bench.configs import FLOOR_MODEL_ARGS, DaemonConfig
from bench.procs import (
    PYTHON,
    AnnouncedProc,
    FakeLLMProc,
    Proc,
    cpu_seconds,
    daemon,
    free_port,
    started,
    wait_ready,
    wait_until,
)
from bench.runner import Context, Outcome
from bench.scenarios import first_reply
from bench.stats import Spec, Table
from tests.channels.email.dovecot import PASSWORD, Dovecot, start_dovecot

SMTP_USER, SMTP_PASSWORD = "bench", "bench-smtp-not-a-secret"
SENDERS = 50
WITHIN_S = 120.0
QUIET_S = 0.5
RATE = Spec("mails_per_s", "mails answered/s", "1/s", "higher")
CPU = Spec("cpu_ms_per_mail", "CPU per mail", "ms", "lower")
FIRST = first_reply.spec("/readyz; floor: IMAP selected")


@dataclass
class Recorder:
    """An SMTP server that accepts and counts the subject's answers."""

    port: int = field(default_factory=free_port)
    arrivals: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        with self.lock:
            self.arrivals.append(time.monotonic())
        return "250 OK"

    def count(self) -> int:
        with self.lock:
            return len(self.arrivals)

    def last(self) -> float:
        with self.lock:
            return max(self.arrivals, default=0.0)


def _auth(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
    ok = isinstance(data, LoginPassword) and data.password == SMTP_PASSWORD.encode()
    return AuthResult(success=ok)


@contextlib.contextmanager
def smtp_server(recorder: Recorder) -> Any:
    controller = Controller(
        recorder,
        hostname="127.0.0.1",
        port=recorder.port,
        authenticator=_auth,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield controller
    finally:
        controller.stop()


def _mail(n: int, tag: str, address: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"sender{n % SENDERS}@example.org"
    msg["To"] = address
    msg["Subject"] = f"{tag} question {n}"
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content(f"{tag} question number {n}: when do you ship?")
    return msg.as_bytes()


def file_burst(dovecot: Dovecot, user: str, address: str, count: int, tag: str) -> float:
    """File ``count`` mails in a staging folder, then move them into INBOX at once; returns the
    monotonic time of the move."""
    conn = imaplib.IMAP4(dovecot.host, dovecot.port)
    try:
        conn.login(user, PASSWORD)
        conn.create("Staging")
        for n in range(count):
            conn.append("Staging", None, None, _mail(n, tag, address))
        conn.select("Staging")
        at = time.monotonic()
        conn.uid("MOVE", "1:*", "INBOX")
        conn.close()
        conn.delete("Staging")
        return at
    finally:
        conn.logout()


@dataclass
class Subject:
    name: str
    user: str
    recorder: Recorder
    proc: Proc | None = None

    @property
    def address(self) -> str:
        return f"{self.user}@example.org"


def email_section(dovecot: Dovecot, subject: Subject) -> dict[str, Any]:
    return {
        "address": subject.address,
        "imap": {
            "host": "127.0.0.1",
            "port": dovecot.port,
            "tls": "none",
            "username": subject.user,
            "password": PASSWORD,
        },
        "smtp": {
            "host": "127.0.0.1",
            "port": subject.recorder.port,
            "tls": "none",
            "username": SMTP_USER,
            "password": SMTP_PASSWORD,
        },
        "dm_policy": "open",
    }


def floor_argv(dovecot: Dovecot, subject: Subject, llm: FakeLLMProc) -> list[str]:
    argv = [PYTHON, "-m", "bench.floors.mail_echo", "--imap-port", str(dovecot.port)]
    argv += ["--user", subject.user, "--password", PASSWORD, "--address", subject.address]
    argv += ["--smtp-port", str(subject.recorder.port), "--smtp-user", SMTP_USER]
    argv += ["--smtp-password", SMTP_PASSWORD, "--llm-base", llm.base_url, *FLOOR_MODEL_ARGS]
    return argv


async def burst(dovecot: Dovecot, subject: Subject, count: int, tag: str) -> tuple[float, float]:
    """(mails/s, CPU ms per mail) for one burst of ``count`` mails."""
    assert subject.proc is not None
    proc = subject.proc
    before = subject.recorder.count()
    cpu_before = cpu_seconds(proc.pid)
    moved = await asyncio.to_thread(file_burst, dovecot, subject.user, subject.address, count, tag)
    await wait_until(
        lambda: subject.recorder.count() >= before + count,
        WITHIN_S,
        f"{subject.name}: {count} answers",
        procs=[proc],
        interval=0.005,
    )
    wall = subject.recorder.last() - moved
    await asyncio.sleep(QUIET_S)
    cpu = cpu_seconds(proc.pid) - cpu_before
    return count / wall, cpu * 1000 / count


def deliver(dovecot: Dovecot, user: str, address: str, tag: str) -> None:
    """One mail appended straight into INBOX."""
    conn = imaplib.IMAP4(dovecot.host, dovecot.port)
    try:
        conn.login(user, PASSWORD)
        conn.append("INBOX", None, None, _mail(0, tag, address))
    finally:
        conn.logout()


async def first_contact(dovecot: Dovecot, subject: Subject, ready_at: float) -> float:
    """One mail delivered the moment the subject is ready, answered end to end (imports done,
    connections warm); seconds from ready to the answer at its SMTP server."""
    assert subject.proc is not None
    before = subject.recorder.count()

    def answered_at() -> float | None:
        with subject.recorder.lock:
            arrivals = subject.recorder.arrivals
            return arrivals[before] if len(arrivals) > before else None

    seconds = await first_reply.first_reply(
        subject.name,
        ready_at,
        lambda: asyncio.to_thread(deliver, dovecot, subject.user, subject.address, "first"),
        answered_at,
        [subject.proc],
    )
    await asyncio.sleep(QUIET_S)
    return seconds


async def scenario(ctx: Context) -> Outcome:
    count = ctx.pick(300, 20)
    table = Table()
    dovecot = await asyncio.to_thread(start_dovecot)
    gate = Subject("chatgate", "bench-chatgate", Recorder())
    floor = Subject("floor", "bench-floor", Recorder())
    try:
        async with contextlib.AsyncExitStack() as stack:
            workdir = ctx.scratch("email")
            stack.enter_context(smtp_server(gate.recorder))
            stack.enter_context(smtp_server(floor.recorder))
            llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
            argv = floor_argv(dovecot, floor, llm)
            floor_proc = await stack.enter_async_context(
                started(AnnouncedProc("mail-floor", argv, workdir / "floor.log"))
            )
            floor.proc = floor_proc
            floor_first = await first_contact(dovecot, floor, floor_proc.ready_at)
            port = free_port()
            config = DaemonConfig(
                port, llm_base=llm.base_url, extra_channels={"email": email_section(dovecot, gate)}
            )
            gate.proc = await stack.enter_async_context(
                started(daemon(config.write(workdir / "chatgate")))
            )
            ready_at = await wait_ready(ctx.http, gate.proc, port, first_reply.TIMEOUT_S)
            table.add(FIRST, await first_contact(dovecot, gate, ready_at), floor_first)
            for rep in range(ctx.reps):
                order = (floor, gate) if rep % 2 else (gate, floor)
                results = {s.name: await burst(dovecot, s, count, f"r{rep}") for s in order}
                ours, bare = results["chatgate"], results["floor"]
                table.add(RATE, ours[0], bare[0])
                table.add(CPU, ours[1], bare[1])
    finally:
        await asyncio.to_thread(dovecot.stop)
    params = {
        "mails": count,
        "senders": SENDERS,
        "chatgate": "IMAP IDLE → journal → session → litellm → SMTP (one mail per answer)",
        "floor": "bare aioimaplib IDLE + aiosmtplib, one litellm call per mail",
    }
    return Outcome(table, params)
