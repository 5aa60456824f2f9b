"""Email floor: a bare aioimaplib + aiosmtplib loop answering every new mail.

The least a competent mail bot does with the libraries chatgate's email channel uses: one IMAP
connection in IDLE; on new mail, fetch the new UIDs' bodies, parse them with the standard
library, get the answer (one ``litellm.acompletion`` with ``--mode llm``, as chatgate's litellm
agent, or the text itself with ``--mode echo``) in a task per mail, send it threaded (In-Reply-To,
References) over one reused SMTP connection and flag the mail \\Seen. No journal, no cursor kept
across restarts, no sessions, no robot/list checks, no retries. Prints ``READY 0``; serves until
SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import email
import email.policy
import logging
import re
import signal
from email.message import EmailMessage

import aiosmtplib
from aioimaplib import aioimaplib

from bench.floors.model_args import add_model_args, parse_with_model
from bench.floors.ptb_echo import make_reply

_UIDNEXT = re.compile(rb"\[UIDNEXT (\d+)\]")
_UID = re.compile(rb"\bUID (\d+)")


def answer_of(raw: bytes, address: str, text: str) -> EmailMessage:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    out = EmailMessage()
    out["From"] = address
    out["To"] = str(msg["From"])
    out["Subject"] = "Re: " + str(msg["Subject"] or "")
    out["In-Reply-To"] = str(msg["Message-ID"])
    out["References"] = str(msg["Message-ID"])
    out.set_content(text)
    return out


def body_text(raw: bytes) -> str:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    part = msg.get_body(("plain",))
    content = part.get_content() if part is not None else ""
    return content.strip() if isinstance(content, str) else ""


async def serve(args: argparse.Namespace) -> None:
    reply = make_reply(args)
    imap = aioimaplib.IMAP4(host=args.imap_host, port=args.imap_port, timeout=30)
    await imap.wait_hello_from_server()
    await imap.login(args.user, args.password)
    selected = await imap.select("INBOX")
    found = _UIDNEXT.search(b"\n".join(x for x in selected.lines if isinstance(x, bytes)))
    last = int(found.group(1)) - 1 if found else 0
    smtp = aiosmtplib.SMTP(
        hostname="127.0.0.1",
        port=args.smtp_port,
        username=args.smtp_user,
        password=args.smtp_password,
        start_tls=False,
    )
    await smtp.connect()
    send_lock = asyncio.Lock()
    tasks: set[asyncio.Task[None]] = set()

    async def answer(raw: bytes) -> None:
        text = await reply(body_text(raw))
        async with send_lock:
            await smtp.send_message(answer_of(raw, args.address, text))

    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    print("READY 0", flush=True)
    while not done.is_set():
        response = await imap.uid("fetch", f"{last + 1}:*", "(UID BODY.PEEK[])")
        uid = 0
        for line in response.lines:
            if isinstance(line, bytes) and b"FETCH" in line:
                match = _UID.search(line)
                uid = int(match.group(1)) if match else 0
            elif isinstance(line, bytearray) and uid > last:
                task = asyncio.create_task(answer(bytes(line)))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                await imap.uid("store", str(uid), "+FLAGS.SILENT", "(\\Seen)")
                last = uid
        idle = await imap.idle_start(timeout=60)
        stop = asyncio.ensure_future(done.wait())
        push = asyncio.ensure_future(imap.wait_server_push())
        await asyncio.wait({push, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        push.cancel()
        imap.idle_done()
        await asyncio.wait_for(idle, 10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floors.mail_echo", description=__doc__)
    parser.add_argument("--imap-host", default="127.0.0.1")
    parser.add_argument("--imap-port", type=int, required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--smtp-port", type=int, required=True)
    parser.add_argument("--smtp-user", required=True)
    parser.add_argument("--smtp-password", required=True)
    parser.add_argument("--address", required=True)
    add_model_args(parser)
    args = parse_with_model(parser, argv)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
