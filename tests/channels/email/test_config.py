"""`channels.email`: what loads, what is refused at load (exit 78 with key path and line), a
refused IMAP login parks the channel with its fix, and the passwords never show."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from chatgate.channels.email.config import EmailChannelConfig
from chatgate.channels.email.doctor import check
from chatgate.config.findings import Level
from tests.channels.email.dovecot import TOKEN_PREFIX
from tests.channels.email.servers import SMTP_PASSWORD, MailWorld, mail
from tests.channels.email.support import ALICE, email_config
from tests.config.support import load_error
from tests.fakes.llm import FakeLLM
from tests.harness import channel_status, eventually_channel_state, running

SECTION = """config_version: 1
channels:
  email:
    address: Support@Example.org
    imap:
      host: {imap_host}
      tls: {imap_tls}
      username: support
      password: p
    smtp:
      host: smtp.example.org
      username: support
      password: p
"""


def test_defaults_and_normalised_address() -> None:
    section = EmailChannelConfig.model_validate(
        {
            "address": "Support@Example.org",
            "imap": {"host": "imap.example.org", "username": "u", "password": "p"},
            "smtp": {"host": "smtp.example.org", "username": "u", "password": "p"},
        }
    )
    assert section.address == "support@example.org"
    assert (section.imap.port, section.imap.tls, section.imap.folder) == (993, "implicit", "INBOX")
    assert (section.smtp.port, section.smtp.tls) == (587, "starttls")
    assert section.dm_policy == "allowlist"
    assert section.imap.idle_renew_s < 29 * 60


@pytest.mark.parametrize(
    ("host", "tls", "words"),
    [
        ("imap.example.org", "starttls", "starttls is not supported for IMAP"),
        ("imap.example.org", "none", "loopback hosts only"),
    ],
)
def test_refused_at_load_with_key_path_and_line(
    tmp_path: Path, host: str, tls: str, words: str
) -> None:
    error = load_error(tmp_path, SECTION.format(imap_host=host, imap_tls=tls))
    assert error.exit_code == 78
    [issue] = error.issues
    assert issue.path[:3] == ("channels", "email", "imap") and issue.line is not None
    assert words in error.render()


def test_plaintext_on_loopback_loads(tmp_path: Path) -> None:
    config = EmailChannelConfig.model_validate(
        {
            "address": "bot@example.org",
            "imap": {"host": "127.0.0.1", "tls": "none", "port": 143, "password": "p"},
            "smtp": {"host": "localhost", "tls": "none", "port": 25, "password": "p"},
        }
    )
    assert config.imap.tls == "none"


async def test_a_refused_imap_login_parks_the_channel_with_its_fix(
    tmp_path: Path, own_world: MailWorld, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    world = own_world
    caplog.set_level(logging.DEBUG)
    wrong = "Wr0ng-imap-Pa55word"
    world.mailbox.password = wrong
    async with running(email_config(tmp_path, world, fake_llm)) as gw:
        parked = await eventually_channel_state(gw, "email", "parked")
        status = channel_status(gw, "email")
    assert "refused the login" in str(parked["error"])
    assert "app password" in parked["hint"]
    for text in (str(status), caplog.text):
        assert wrong not in text and SMTP_PASSWORD not in text


async def test_passwords_from_files_and_never_in_logs_or_status(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = tmp_path / "imap-password"
    secret.write_text(world.mailbox.password + "\n")
    secret.chmod(0o600)
    text = email_config(tmp_path, world, fake_llm).read_text()
    text = text.replace(
        f"      password: {world.mailbox.password}\n", f"      password_file: {secret}\n"
    )
    config = tmp_path / "gateway.yaml"
    config.write_text(text)
    async with running(config) as gw:
        await world.deliver(mail(ALICE, world.address, "Hi", "hello"))
        await world.wait_sent(1)
        status = channel_status(gw, "email")
    for shown in (str(status), caplog.text):
        assert world.mailbox.password not in shown and SMTP_PASSWORD not in shown


async def test_doctor_logs_in_to_both_servers(own_world: MailWorld) -> None:
    world = own_world
    section = EmailChannelConfig.model_validate(
        {
            "address": world.address,
            "imap": {
                "host": "127.0.0.1",
                "port": world.imap_port,
                "tls": "none",
                "username": world.mailbox.user,
                "password": world.mailbox.password,
            },
            "smtp": {
                "host": "127.0.0.1",
                "port": world.smtp_port,
                "tls": "none",
                "username": "bot",
                "password": SMTP_PASSWORD,
            },
        }
    )
    found = {f.check: f.level for f in await check("email", section, False)}
    assert found == {"email.imap": Level.OK, "email.smtp": Level.OK}
    bad = section.model_copy(update={"smtp": section.smtp.model_copy(update={"password": None})})
    found = {f.check: f.level for f in await check("email", bad, False)}
    assert found["email.smtp"] == Level.WARN
    wrong = section.model_copy(
        update={
            "imap": section.imap.model_copy(update={"password": SecretStr("wrong")}),
            "smtp": section.smtp.model_copy(update={"port": 1}),
        }
    )
    results = await check("email", wrong, False)
    assert {f.check: f.level for f in results} == {
        "email.imap": Level.FAIL,
        "email.smtp": Level.FAIL,
    }
    assert "app password" in (results[0].fix or "")


async def test_imap_over_oauth2_and_a_refused_token_parks_with_its_fix(
    tmp_path: Path, own_world: MailWorld, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    world = own_world
    caplog.set_level(logging.DEBUG)
    token = tmp_path / "token"
    token.write_text(TOKEN_PREFIX + world.mailbox.user + "\n")
    text = email_config(tmp_path, world, fake_llm).read_text()
    text = text.replace(
        f"      password: {world.mailbox.password}\n",
        f"      oauth2: {{token_file: {token}}}\n      timeout_s: 4\n",
    ).replace("      timeout_s: 5\n    smtp:", "    smtp:")
    config = tmp_path / "gateway.yaml"
    config.write_text(text)
    async with running(config):
        await world.deliver(mail(ALICE, world.address, "Token", "over oauth2"))
        (answer,) = await world.wait_sent(1)
    assert answer["Subject"] == "Re: Token"
    wrong = "expired-token-0123456789"
    token.write_text(wrong)
    async with running(config) as gw:
        parked = await eventually_channel_state(gw, "email", "parked")
    assert "token_file" in parked["hint"]
    assert wrong not in str(parked) and wrong not in caplog.text


async def test_implicit_tls_with_a_private_ca_from_ca_file(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    dovecot = world.mailbox.dovecot
    ca = tmp_path / "ca.pem"
    ca.write_text(dovecot.ca_pem)
    text = email_config(tmp_path, world, fake_llm).read_text()
    text = text.replace(
        f"      port: {dovecot.port}\n      tls: none\n",
        f"      port: {dovecot.tls_port}\n      tls: implicit\n      ca_file: {ca}\n",
    )
    config = tmp_path / "gateway.yaml"
    config.write_text(text)
    async with running(config):
        await world.deliver(mail(ALICE, world.address, "Secure", "over TLS"))
        (answer,) = await world.wait_sent(1)
    assert answer["Subject"] == "Re: Secure"
    # without the CA the certificate is refused: parked, with the fix
    config.write_text(text.replace(f"      ca_file: {ca}\n", ""))
    async with running(config) as gw:
        parked = await eventually_channel_state(gw, "email", "parked")
    assert "not trusted" in parked["error"] and "ca_file" in parked["hint"]
