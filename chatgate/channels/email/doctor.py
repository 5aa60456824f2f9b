"""`chatgate doctor` for email: the IMAP login and folder, and the SMTP login, each tried."""

from __future__ import annotations

import asyncio

from chatgate.channels.base import ChannelError
from chatgate.channels.email.config import EmailChannelConfig, MailServerConfig
from chatgate.config.findings import Finding, Level

PROBE_TIMEOUT_S = 20.0


def _missing(server: MailServerConfig) -> bool:
    return server.password is None and server.oauth2 is None


async def check(name: str, config: EmailChannelConfig, offline: bool) -> list[Finding]:
    findings: list[Finding] = []
    for part in ("imap", "smtp"):
        server: MailServerConfig = getattr(config, part)
        where = f"{server.host}:{server.port}"
        key = f"channels.{name}.{part}"
        if _missing(server):
            findings.append(
                Finding(
                    f"{name}.{part}",
                    Level.WARN,
                    f"not configured: no {part.upper()} password",
                    f"set {key}.password (or password_file, or oauth2.token_file)",
                    key,
                )
            )
            continue
        if offline:
            findings.append(Finding(f"{name}.{part}", Level.SKIP, f"{where}; not contacted"))
            continue
        try:
            await asyncio.wait_for(_probe(config, part), PROBE_TIMEOUT_S)
        except ChannelError as exc:
            findings.append(Finding(f"{name}.{part}", Level.FAIL, str(exc), exc.hint, key))
        except (OSError, TimeoutError) as exc:
            findings.append(
                Finding(
                    f"{name}.{part}",
                    Level.FAIL,
                    f"{where} unreachable ({type(exc).__name__})",
                    f"check {key}.host, port and tls, and network access to {where}",
                    key,
                )
            )
        else:
            findings.append(Finding(f"{name}.{part}", Level.OK, f"{where}: logged in"))
    return findings


async def _probe(config: EmailChannelConfig, part: str) -> None:
    from chatgate.channels.email.imap import connect
    from chatgate.channels.email.outbound import SMTP_AUTH_HINT, Smtp

    if part == "imap":
        session = await connect(config.imap)
        await session.close()
        return
    import aiosmtplib

    smtp = Smtp(config.smtp)
    client = smtp.make_client()
    try:
        await client.connect()
    except aiosmtplib.SMTPAuthenticationError:
        raise ChannelError("the SMTP server refused the login", hint=SMTP_AUTH_HINT) from None
    finally:
        if client.is_connected:
            client.close()
