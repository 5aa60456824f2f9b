"""Every config error names the key path and the YAML line (table-driven, in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from chatgate.config import EX_CONFIG, ConfigError
from chatgate.config.base import secret_value
from tests.config.support import assert_issue, catalog, issue_at, load, load_error

ERROR_CASES = [
    pytest.param(
        """
        channels:
          telegram:
            token: t
            dm_policy: allowlist
            group_policy: mentions
        """,
        "channels.telegram.group_policy",
        5,
        "'mentions' is not one of respond_all, mention_only, command_only, observe",
        id="bad-literal-group-policy",
    ),
    pytest.param(
        """
        gateway:
          log: {level: loud}
        """,
        "gateway.log.level",
        2,
        "'loud' is not one of debug, info, warning, error",
        id="bad-literal-flow-mapping",
    ),
    pytest.param(
        """
        gateway:
          event_loop: trio
        """,
        "gateway.event_loop",
        2,
        "'trio' is not one of auto, uvloop, asyncio",
        id="bad-event-loop",
    ),
    pytest.param(
        """
        gateway:
          http:
            host: 127.0.0.1
            prot: 8080
        """,
        "gateway.http.prot",
        4,
        "unknown key 'prot' (did you mean 'port'?)",
        id="unknown-key-did-you-mean",
    ),
    pytest.param(
        """
        gatewya:
          http: {port: 1}
        """,
        "gatewya",
        1,
        "unknown key 'gatewya' (did you mean 'gateway'?)",
        id="unknown-top-level-key",
    ),
    pytest.param(
        """
        agents:
          default:
            backend: litellm
            model: openai/gpt-4o-mini
            temprature: 0.2
        """,
        "agents.default.temprature",
        5,
        "did you mean 'temperature'?",
        id="unknown-key-in-agent",
    ),
    pytest.param(
        """
        gateway:
          http:
            port: eighty
        """,
        "gateway.http.port",
        3,
        "valid integer",
        id="wrong-type-int",
    ),
    pytest.param(
        """
        gateway:
          http:
            port: 70000
        """,
        "gateway.http.port",
        3,
        "less than or equal to 65535",
        id="out-of-range",
    ),
    pytest.param(
        """
        channels:
          telegram:
            stream: yes please
        """,
        "channels.telegram.stream",
        3,
        "got a string",
        id="wrong-type-section",
    ),
    pytest.param(
        """
        gateway:
          silence_markers: 5
        """,
        "gateway.silence_markers",
        2,
        "valid list, got an integer",
        id="wrong-type-list",
    ),
    pytest.param(
        """
        agents:
          default:
            backend: litellm
            timeout_s: 10
        """,
        "agents.default.model",
        2,
        "required key is missing",
        id="missing-required-model",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              deploy:
                secret: s3
        """,
        "channels.webhook.routes.deploy.path",
        4,
        "required key is missing",
        id="missing-route-path",
    ),
    pytest.param(
        """
        agents:
          default:
            model: x
        """,
        "agents.default",
        2,
        "missing 'backend' (one of litellm, echo, python, http)",
        id="missing-backend",
    ),
    pytest.param(
        """
        agents:
          default:
            backend: openai
            model: gpt-4o
        """,
        "agents.default.backend",
        3,
        "'openai' is not one of litellm, echo, python, http",
        id="unknown-backend",
    ),
    pytest.param(
        """
        agents:
          bot: {backend: echo}
        channels:
          telegram:
            token: t
            agent: helper
        """,
        "channels.telegram.agent",
        6,
        "unknown agent 'helper' (agents: bot)",
        id="unknown-agent-channel",
    ),
    pytest.param(
        """
        routes:
          - match: {channel: telegram, chat_id: "-100"}
            agent: support
        """,
        "routes[0].agent",
        3,
        "unknown agent 'support' (agents: default)",
        id="unknown-agent-route-binding",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              ci:
                path: /hooks/ci
                secret: s3
                agent: builder
        """,
        "channels.webhook.routes.ci.agent",
        7,
        "unknown agent 'builder'",
        id="unknown-agent-webhook-route",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              api:
                path: /api/hooks
                secret: s3
        """,
        "channels.webhook.routes.api.path",
        5,
        "'/api/hooks' is reserved by the gateway",
        id="reserved-path-api",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              health:
                path: /healthz
                secret: s3
        """,
        "channels.webhook.routes.health.path",
        5,
        "reserved",
        id="reserved-path-healthz",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              first: {path: /hooks/x, secret: a}
              second:
                path: /hooks/x
                secret: b
        """,
        "channels.webhook.routes.second.path",
        6,
        "'/hooks/x' is also used by channels.webhook.routes.first.path",
        id="duplicate-webhook-path",
    ),
    pytest.param(
        """
        channels:
          telegram:
            token: t
            mode: webhook
            webhook: {public_url: "https://bot.example.com", path: /tg, secret_token: s}
          webhook:
            routes:
              clash: {path: /tg, secret: s}
        """,
        "channels.webhook.routes.clash.path",
        8,
        "also used by channels.telegram.webhook.path",
        id="route-path-clashes-with-telegram-webhook",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              alert:
                path: /hooks/alert
                secret: s3
                respond: async
                deliver:
                  to: "telegram:-100123"
        """,
        "channels.webhook.routes.alert.deliver.to",
        9,
        "channel 'telegram' is not configured",
        id="deliver-to-unconfigured-channel",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              alert:
                path: /hooks/alert
                secret: s3
                respond: async
                deliver: {to: "telegram chat 5"}
        """,
        "channels.webhook.routes.alert.deliver.to",
        8,
        "'telegram chat 5' has the wrong format",
        id="deliver-to-bad-format",
    ),
    pytest.param(
        """
        channels:
          telegram: {token: t}
          webhook:
            routes:
              alert:
                path: /hooks/alert
                secret: s3
                deliver: {to: "telegram:5"}
        """,
        "channels.webhook.routes.alert",
        5,
        "deliver is only used with respond: async",
        id="deliver-needs-async",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              open:
                path: /hooks/open
                signature: github
        """,
        "channels.webhook.routes.open",
        4,
        "secret is required unless signature: none",
        id="webhook-route-without-secret",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              gh:
                path: /hooks/gh
                secret: s3
                when:
                  all:
                    - {field: payload.action, eq: opened}
        """,
        "channels.webhook.routes.gh.when",
        7,
        "when.all[0]: unknown operator 'eq'",
        id="bad-filter-operator",
    ),
    pytest.param(
        """
        channels:
          webhook:
            routes:
              gh:
                path: /hooks/gh
                secret: s3
                when: {field: payload.n, regex: "(unclosed"}
        """,
        "channels.webhook.routes.gh.when",
        7,
        "bad regex",
        id="bad-filter-regex",
    ),
    pytest.param(
        """
        gateway:
          log:
            level: info
          store: {backend: sqlite}
          log:
            level: debug
        """,
        "gateway.log",
        5,
        "duplicate key",
        id="duplicate-yaml-key",
    ),
    pytest.param(
        """
        gateway:
          http:
            host: [127.0.0.1
          api_token: x
        """,
        "<root>",
        4,
        "YAML syntax error",
        id="yaml-syntax-error",
    ),
    pytest.param(
        """
        config_version: 99
        gateway: {}
        """,
        "config_version",
        1,
        "99 is newer than this chatgate supports (1)",
        id="config-version-newer",
    ),
    pytest.param(
        """
        # comment first
        config_version: "1"
        """,
        "config_version",
        2,
        "must be an integer",
        id="config-version-string",
    ),
    pytest.param(
        """
        config_version: true
        """,
        "config_version",
        1,
        "must be an integer",
        id="config-version-bool",
    ),
    pytest.param(
        """
        channels:
          telegram:
            token: t
            allowed_users: "12345, 67890"
        """,
        "channels.telegram.allowed_users",
        4,
        "run `chatgate config migrate`",
        id="legacy-csv-allowed-users",
    ),
    pytest.param(
        """
        channels:
          telegram:
            token: t
            blocked_users: 12345
        """,
        "channels.telegram.blocked_users",
        4,
        "run `chatgate config migrate`",
        id="legacy-lone-id",
    ),
    pytest.param(
        """
        channels:
          irc:
            token: t
        """,
        "channels.irc",
        2,
        "unknown channel 'irc' (known: ",
        id="unknown-channel",
    ),
    pytest.param(
        """
        agents:
          default:
            backend: litellm
            model: ${MODEL:?is required for the default agent}
        """,
        "agents.default.model",
        4,
        "environment variable MODEL is required for the default agent",
        id="required-env-var",
    ),
    pytest.param(
        """
        gateway:
          http:
            port: ${PORT}
        """,
        "gateway.http.port",
        3,
        "(environment variable PORT is not set)",
        id="unset-env-var-hint",
    ),
    pytest.param(
        """
        - just
        - a list
        """,
        "<root>",
        None,
        "must be a mapping of sections",
        id="not-a-mapping",
    ),
    pytest.param(
        """
        channels:
          slack:
            bot_token: xoxb-1-abc
            mode: socket
        """,
        "channels.slack.mode",
        4,
        "mode: socket needs app_token",
        id="slack-socket-without-app-token",
    ),
    pytest.param(
        """
        channels:
          slack:
            bot_token: xoxb-1-abc
        """,
        "channels.slack.mode",
        2,
        "mode: socket needs app_token",
        id="slack-default-socket-mode-without-app-token",
    ),
    pytest.param(
        """
        channels:
          slack:
            bot_token: xoxb-1-abc
            mode: events
        """,
        "channels.slack.mode",
        4,
        "mode: events needs signing_secret",
        id="slack-events-without-signing-secret",
    ),
    pytest.param(
        """
        channels:
          slack:
            bot_token: xapp-1-wrong-kind
            app_token: xapp-1-abc
        """,
        "channels.slack.bot_token",
        3,
        "a bot token starts with xoxb-",
        id="slack-app-token-in-bot-token",
    ),
    pytest.param(
        """
        channels:
          slack:
            bot_token: xoxb-1-abc
            app_token: xapp-1-abc
            ack_reaction: "two words"
        """,
        "channels.slack.ack_reaction",
        5,
        "is not an emoji name",
        id="slack-bad-emoji-name",
    ),
    pytest.param(
        """
        agents:
          talker:
            backend: litellm
            model: openai/gpt-4o-mini
            voice_reply: always
        """,
        "agents.talker.voice_model",
        2,
        "voice_reply needs voice_model",
        id="voice-reply-without-a-voice-model",
    ),
]


@pytest.mark.parametrize(("text", "path", "line", "fragment"), ERROR_CASES)
def test_error_names_path_and_line(
    tmp_path: Path, text: str, path: str, line: int | None, fragment: str
) -> None:
    error = load_error(tmp_path, text)
    assert error.exit_code == EX_CONFIG
    if line is None:
        issue = issue_at(error, path)
        assert fragment in issue.message
        return
    assert_issue(error, path, line, fragment)


def test_issue_render_matches_spec_format(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        channels:
          telegram:
            token: t
            group_policy: mentions
        """,
    )
    assert str(error) == (
        "invalid config: channels.telegram.group_policy: 'mentions' is not one of "
        "respond_all, mention_only, command_only, observe (gateway.yaml:4)"
    )


def test_multiple_errors_reported_together(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        gateway:
          http:
            port: eighty
          log: {level: loud}
        agents:
          default: {backend: openai}
        channels:
          telegram:
            group_policy: mentions
          irc: {}
        """,
    )
    assert len(error.issues) == 5, error.render()
    assert_issue(error, "gateway.http.port", 3, "valid integer")
    assert_issue(error, "gateway.log.level", 4, "'loud'")
    assert_issue(error, "agents.default.backend", 6, "'openai'")
    assert_issue(error, "channels.telegram.group_policy", 9, "'mentions'")
    assert_issue(error, "channels.irc", 10, "unknown channel")
    assert error.render().startswith("invalid config:\n  - ")
    assert error.render().count("\n  - ") == 5


def test_cross_check_errors_reported_together(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        channels:
          webhook:
            routes:
              a: {path: /api/a, secret: s, agent: ghost}
              b: {path: /hooks/b, secret: s, respond: async, deliver: {to: "telegram:1"}}
        routes:
          - {match: {channel: webhook}, agent: phantom}
        """,
    )
    assert len(error.issues) == 4, error.render()
    assert_issue(error, "channels.webhook.routes.a.agent", 4, "unknown agent 'ghost'")
    assert_issue(error, "channels.webhook.routes.a.path", 4, "reserved")
    assert_issue(error, "channels.webhook.routes.b.deliver.to", 5, "not configured")
    assert_issue(error, "routes[0].agent", 7, "unknown agent 'phantom'")


def test_missing_config_file_names_the_file(tmp_path: Path) -> None:
    from chatgate.config import load_config

    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "absent.yaml", env={}, catalog=catalog())
    assert "cannot read config file" in str(info.value)
    assert "absent.yaml" in str(info.value)


class TeamsConfig(BaseModel):
    """A plugin channel's own model, validated under channels.<name>."""

    model_config = ConfigDict(extra="forbid")
    app_id: str
    app_password: SecretStr
    mode: str = "socket"
    retries: int = Field(3, ge=0)


PLUGINS: dict[str, type[BaseModel]] = {"teams": TeamsConfig}


@pytest.mark.parametrize(
    ("text", "path", "line", "fragment"),
    [
        pytest.param(
            """
            channels:
              teams:
                app_password: pw
            """,
            "channels.teams.app_id",
            2,
            "required key is missing",
            id="plugin-missing",
        ),
        pytest.param(
            """
            channels:
              teams:
                app_id: a
                app_password: pw
                mdoe: webhook
            """,
            "channels.teams.mdoe",
            5,
            "unknown key 'mdoe' (did you mean 'mode'?)",
            id="plugin-unknown-key",
        ),
        pytest.param(
            """
            channels:
              teams:
                app_id: a
                app_password: pw
                retries: many
            """,
            "channels.teams.retries",
            5,
            "valid integer",
            id="plugin-wrong-type",
        ),
        pytest.param(
            """
            channels:
              irc: {}
            """,
            "channels.irc",
            2,
            "unknown channel 'irc' (known: ",
            id="plugin-unknown-channel",
        ),
    ],
)
def test_plugin_channel_errors(
    tmp_path: Path, text: str, path: str, line: int, fragment: str
) -> None:
    assert_issue(load_error(tmp_path, text, plugin_models=PLUGINS), path, line, fragment)


def test_plugin_and_builtin_errors_reported_together(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        channels:
          teams: {app_id: a}
          telegram: {dm_policy: everyone}
        """,
        plugin_models=PLUGINS,
    )
    assert_issue(error, "channels.teams.app_password", 2, "required key is missing")
    assert_issue(error, "channels.telegram.dm_policy", 3, "'everyone' is not one of open")


def test_plugin_channel_loads_into_channels(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
        channels:
          teams: {app_id: a, app_password: "teams-pw-123", retries: 0}
        """,
        plugin_models=PLUGINS,
    )
    plugin = loaded.channels["teams"].config
    assert isinstance(plugin, TeamsConfig)
    assert plugin.retries == 0
    assert "teams-pw-123" in loaded.secrets


def test_merge_key_override_is_not_a_duplicate(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
        agents:
          default: &base
            backend: echo
            prefix: "a:"
          other:
            <<: *base
            prefix: "b:"
        """,
    )
    assert loaded.config.agents["default"].prefix == "a:"  # type: ignore[union-attr]
    assert loaded.config.agents["other"].prefix == "b:"  # type: ignore[union-attr]


def test_valid_routes_and_signature_none(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
        config_version: 1
        channels:
          telegram: {token: t, group_policy: observe, allowed_users: [1, "2"]}
          webhook:
            routes:
              public: {path: /hooks/public, signature: none}
              alert:
                path: /hooks/alert
                secret: s3
                respond: async
                deliver: {to: "telegram:-100:7"}
                when: {any: [{field: payload.x, equals: 1}, {field: headers.X-Y, exists: true}]}
        routes:
          - match: {channel: telegram, chat_kind: group}
            agent: default
        """,
    )
    assert loaded.warnings == []
    assert loaded.channel("telegram") is not None
    assert loaded.channels["telegram"].config.allowed_users == ["1", "2"]
    assert loaded.channel("webhook") is not None
    assert set(loaded.channels["webhook"].config.routes) == {"public", "alert"}
    assert loaded.state_dir == tmp_path / ".chatgate"


def test_missing_version_stamp_warns(tmp_path: Path) -> None:
    loaded = load(tmp_path, "gateway: {}\n")
    assert any("chatgate config migrate" in w for w in loaded.warnings)


def test_shipped_gateway_yaml_loads_without_env() -> None:
    from chatgate.config import load_config

    shipped = Path(__file__).resolve().parents[2] / "gateway.yaml"
    loaded = load_config(shipped, env={}, catalog=catalog())
    assert loaded.config.config_version == 1
    assert set(loaded.config.agents) == {"default", "echo"}
    assert loaded.config.gateway.http.port == 8765
    assert secret_value(loaded.config.gateway.api_token) is None  # ${CHATGATE_API_TOKEN:-}
    assert loaded.warnings == []


def test_further_instances_of_a_platform_need_a_type(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
channels:
  telegram: {token: "1:a"}
  support_bot: {type: telegram, token: "2:b", dm_policy: open}
  hooks2: {type: webhook, routes: {}}
""",
    )
    assert {name: s.platform for name, s in loaded.channels.items()} == {
        "telegram": "telegram",
        "support_bot": "telegram",
        "hooks2": "webhook",
    }
    assert loaded.channels["support_bot"].config.dm_policy == "open"  # type: ignore[attr-defined]
    error = load_error(tmp_path, "channels:\n  bot2: {type: telgram, token: x}\n")
    assert_issue(error, "channels.bot2.type", 2, "unknown channel type 'telgram'")


def test_redis_backends_load_and_unknown_ones_are_named(tmp_path: Path) -> None:
    text = (
        "gateway:\n  store: {backend: redis, url: 'redis://:pw@10.0.0.5:6379/2', key_prefix: 'cg:'}\n"
        "  turn_lock: {backend: redis}\n"
    )
    gateway = load(tmp_path, text).config.gateway
    assert gateway.redis_url() == "redis://:pw@10.0.0.5:6379/2"
    assert gateway.redis_prefix() == "cg:"
    assert gateway.uses_redis
    error = load_error(
        tmp_path, "gateway:\n  store: {backend: redis}\n  turn_lock: {backend: etcd}\n"
    )
    assert_issue(error, "gateway.turn_lock.backend", 3, "etcd")


def test_identities_name_each_address_once(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        identities:
          alice: ["telegram:1", "slack:U1"]
          bob: ["telegram:1"]
        """,
    )
    assert_issue(error, "identities", 1, "telegram:1 is listed under both alice and bob")
    error = load_error(tmp_path, 'identities:\n  eve: ["telegram:1", "not an address"]\n')
    assert_issue(error, "identities.eve[1]", 2, "'not an address' has the wrong format")


def test_telegram_webhook_mode_needs_a_secret_token(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        channels:
          telegram:
            token: t
            mode: webhook
            webhook: {public_url: "https://bot.example.com"}
        """,
    )
    assert_issue(error, "channels.telegram.webhook", 5, "secret_token is required in webhook mode")


def test_an_unknown_channel_lists_every_known_platform(tmp_path: Path) -> None:
    from chatgate.channels.registry import BUILTIN

    error = load_error(tmp_path, "channels:\n  irc: {}\n", plugin_models=PLUGINS)
    known = ", ".join(sorted({*BUILTIN, *PLUGINS}))
    assert_issue(error, "channels.irc", 2, f"(known: {known}; a further instance needs `type:`)")
