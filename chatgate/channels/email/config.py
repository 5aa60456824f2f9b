"""`channels.email` in gateway.yaml (imports no mail library: `chatgate status` stays fast)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.base import StrictModel
from chatgate.config.channel_models import ChatChannelConfig, DmPolicyName

ADDRESS = r"^[^@\s<>\"(),;:]+@[^@\s<>\"(),;:]+$"
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
IDLE_LIMIT_S = 29 * 60  # RFC 2177: a server may end an IDLE after 30 minutes of silence
MB = 1024 * 1024


class OAuth2Config(StrictModel):
    """XOAUTH2 (Gmail, Microsoft 365): an access token, usually as ``token_file`` that a token
    helper rewrites; a reload (SIGHUP) reads it again and the channel logs in with it."""

    token: SecretStr


class MailServerConfig(StrictModel):
    host: str = Field(min_length=1)
    port: int = Field(ge=1, le=65535)
    tls: Literal["implicit", "starttls", "none"]
    ca: str | None = Field(
        None,
        description="PEM of a private CA or self-signed server certificate (usually ca_file: "
        "a path, read at load like every *_file)",
    )
    username: str | None = None
    password: SecretStr | None = None
    oauth2: OAuth2Config | None = None
    timeout_s: float = Field(30.0, gt=0, le=600)

    @model_validator(mode="after")
    def _plaintext_on_loopback_only(self) -> MailServerConfig:
        if self.tls == "none" and self.host not in LOOPBACK:
            raise ValueError(
                f"tls: none sends the password in clear text; it is allowed for loopback hosts "
                f"only ({', '.join(sorted(LOOPBACK))}), not {self.host!r}: use implicit or starttls"
            )
        if self.password is not None and self.oauth2 is not None:
            raise ValueError("set password or oauth2, not both")
        return self


class ImapConfig(MailServerConfig):
    port: int = Field(993, ge=1, le=65535)
    tls: Literal["implicit", "starttls", "none"] = "implicit"
    folder: str = Field("INBOX", min_length=1)
    idle_renew_s: float = Field(
        25 * 60, gt=0, le=IDLE_LIMIT_S, description="IDLE is ended and restarted this often"
    )
    poll_interval_s: float = Field(
        60.0, gt=0, le=3600, description="how often to look for mail when the server has no IDLE"
    )
    move_handled_to: str | None = Field(
        None, min_length=1, description="a folder handled mail is moved to (unset: it stays)"
    )

    @field_validator("tls")
    @classmethod
    def _no_starttls(cls, value: str) -> str:
        if value == "starttls":
            raise ValueError(
                "starttls is not supported for IMAP (the client library has no STARTTLS): use "
                "tls: implicit on port 993, which every provider offers"
            )
        return value


class SmtpConfig(MailServerConfig):
    port: int = Field(587, ge=1, le=65535)
    tls: Literal["implicit", "starttls", "none"] = "starttls"
    connections: int = Field(4, ge=1, le=32, description="answers sent side by side at most")


class EmailChannelConfig(ChatChannelConfig):
    address: str = Field(pattern=ADDRESS, description="the bot's address: From of its answers")
    imap: ImapConfig
    smtp: SmtpConfig
    dm_policy: DmPolicyName = "allowlist"
    untrusted: bool = Field(
        False, description="mail bodies are untrusted content: write tools need approval"
    )
    require_authentication_results: bool = Field(
        False, description="answer only mail whose Authentication-Results says dkim/spf/dmarc=pass"
    )
    authserv_id: str | None = Field(
        None,
        min_length=1,
        description="the authserv-id of your own MTA's Authentication-Results (others ignored)",
    )
    max_message_bytes: int = Field(
        25 * MB, ge=1024, le=200 * MB, description="larger mail is skipped, never fetched"
    )

    @field_validator("address")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()
