"""The systemd unit chatgate ships (`deploy/chatgate.service`) and `chatgate install-service` writes.

One template, so the file in the repository and the unit installed for a venv never drift. The
hardening keeps the daemon to what it needs (TCP/Unix sockets, its state and config directories,
the `@system-service` system calls, no capabilities): `systemd-analyze security` scores it about
1.5 where the plain unit scored 8.5 EXPOSED.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

DEFAULT_EXEC = PurePosixPath("/usr/local/bin/chatgate")
CONFIG_DIR = PurePosixPath("/etc/chatgate")
STATE_DIR = PurePosixPath("/var/lib/chatgate")
# Exit codes a restart cannot fix: 78 invalid config. 71 (cannot bind, state dir not writable)
# may be a port still held by the previous process, so it is retried, but only StartLimitBurst
# times in StartLimitIntervalSec, then the unit stays failed.
NO_RESTART_EXIT = (78,)


@dataclass(frozen=True)
class UnitSpec:
    """What differs between installs: the entry point and the account the daemon runs as."""

    exec_path: PurePosixPath = DEFAULT_EXEC
    user: str = "chatgate"
    dynamic_user: bool = False

    @property
    def protect_home(self) -> str:
        """A venv under /home or /root must stay readable; everything else there is hidden."""
        parts = self.exec_path.parts
        return "read-only" if len(parts) > 1 and parts[1] in ("home", "root") else "true"


def render_unit(spec: UnitSpec = UnitSpec()) -> str:
    """The unit file text for ``spec``."""
    account = "DynamicUser=yes\n" if spec.dynamic_user else f"User={spec.user}\nGroup={spec.user}\n"
    no_restart = " ".join(str(code) for code in NO_RESTART_EXIT)
    return f"""\
# systemd unit for chatgate. `sudo chatgate install-service` writes it for the chatgate you run
# (its venv), creates the `{spec.user}` user and prints the next steps (README "Deploy → systemd").
[Unit]
Description=chatgate chat-bot gateway
Wants=network-online.target
After=network-online.target
# A daemon that keeps failing to start (exit 71: port taken, state dir not writable) stops
# being restarted after 5 attempts in 5 minutes; `systemctl reset-failed chatgate` re-arms it.
StartLimitIntervalSec=300
StartLimitBurst=5

[Service]
Type=notify
NotifyAccess=main
WatchdogSec=30
{account}Environment=CHATGATE_CONFIG={CONFIG_DIR}/gateway.yaml
Environment=CHATGATE_STATE_DIR={STATE_DIR}
# A home the SDKs can name (slack_sdk calls Path.home() at import): a DynamicUser= uid has no
# passwd entry where libnss-systemd is not installed (minimal Debian), and then no home at all.
Environment=HOME={STATE_DIR}
EnvironmentFile=-{CONFIG_DIR}/env
ExecStart={spec.exec_path} run
ExecReload=/bin/kill -HUP $MAINPID
KillSignal=SIGTERM
# Above the 30 s drain (gateway.drain_timeout_s) so a turn in flight finishes.
TimeoutStopSec=60
Restart=on-failure
RestartSec=5
# An invalid config exits 78 (EX_CONFIG): restarting would not fix it.
RestartPreventExitStatus={no_restart}
StateDirectory=chatgate
StateDirectoryMode=0750
ConfigurationDirectory=chatgate
# Well above gateway.http.max_connections plus what the SDKs and SQLite hold open.
LimitNOFILE=65536

# Hardening: no capabilities, a read-only system, no kernel or namespace access. Transcripts
# and the state database are created 0600 (UMask).
CapabilityBoundingSet=
AmbientCapabilities=
NoNewPrivileges=true
UMask=0077
ProtectSystem=strict
ProtectHome={spec.protect_home}
PrivateTmp=true
PrivateDevices=true
PrivateMounts=true
DevicePolicy=closed
ProtectKernelTunables=true
ProtectKernelModules=true
ProtectKernelLogs=true
ProtectControlGroups=true
ProtectClock=true
ProtectHostname=true
ProtectProc=invisible
RestrictNamespaces=true
RestrictRealtime=true
RestrictSUIDSGID=true
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
LockPersonality=true
MemoryDenyWriteExecute=true
RemoveIPC=true
KeyringMode=private
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM

[Install]
WantedBy=multi-user.target
"""
