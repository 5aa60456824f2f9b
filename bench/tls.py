"""A throwaway certificate authority for serving the fakes over TLS on 127.0.0.1.

The daemon and the floors trust it the way an operator would trust a private CA: through the
standard ``SSL_CERT_FILE`` variable, which chatgate's Telegram transport and httpx (under the
python-telegram-bot floor) read when they build their SSL context. No chatgate setting is involved.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import trustme


@dataclass(frozen=True)
class LoopbackTLS:
    """A server context for 127.0.0.1 and the CA bundle clients need to trust it."""

    server_context: ssl.SSLContext
    ca_file: Path

    def client_env(self) -> dict[str, str]:
        """Environment for a child that must trust the CA (and only it)."""
        return {"SSL_CERT_FILE": str(self.ca_file)}


def loopback_tls(directory: Path) -> LoopbackTLS:
    """A fresh CA and a leaf certificate for 127.0.0.1/localhost; the CA PEM goes to ``directory``."""
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    leaf.configure_cert(context)
    directory.mkdir(parents=True, exist_ok=True)
    ca_file = directory / "bench-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    return LoopbackTLS(context, ca_file)
