"""`migrate_file`: declarative rules on the raw file, comments kept, `.bak` written, idempotent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from chatgate.config import CONFIG_VERSION, load_config
from chatgate.config.migrate import migrate_document, migrate_file
from tests.config.support import catalog, write_config

LEGACY = """
# chatgate config written before config_version existed
gateway:
  http:
    port: 8765          # keep this comment
channels:
  # the telegram bot
  telegram:
    token: ${TG_TOKEN}   # from the environment
    dm_policy: allowlist
    allowed_users: "111, 222,333"   # legacy CSV
    blocked_users: 444
    allowed_chats: []
  matrix:
    homeserver: https://matrix.example.org
  webhook:
    routes:
      deploy:
        path: /hooks/deploy   # CI calls this
        secret: ${DEPLOY_SECRET:-s3cret}
"""


class MatrixConfig(BaseModel):
    """A plugin chat channel: it shares the chat keys, so it gets a group_policy too."""

    model_config = ConfigDict(extra="forbid")
    homeserver: str
    group_policy: str = "mention_only"


def _yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    return write_config(tmp_path, LEGACY)


def test_migration_rewrites_legacy_keys(legacy: Path) -> None:
    original = legacy.read_bytes()
    result = migrate_file(legacy)
    assert [r.rsplit("[", 1)[-1] for r in result.applied] == [
        "allowed_users_csv_to_list]",
        "group_policy_default]",
        f"stamped config_version: {CONFIG_VERSION}",
    ]
    assert result.backup == legacy.with_name("gateway.yaml.bak")
    assert result.backup.read_bytes() == original
    data = _yaml(legacy)
    assert data["config_version"] == CONFIG_VERSION
    assert next(iter(data)) == "config_version"
    telegram = data["channels"]["telegram"]
    assert telegram["allowed_users"] == ["111", "222", "333"]
    assert telegram["blocked_users"] == [444]
    assert telegram["allowed_chats"] == []
    assert telegram["group_policy"] == "mention_only"
    keys = list(telegram)
    assert keys.index("group_policy") == keys.index("dm_policy") + 1
    assert data["channels"]["matrix"]["group_policy"] == "mention_only"
    assert "group_policy" not in data["channels"]["webhook"]
    assert "group_policy" not in data["channels"]["webhook"]["routes"]["deploy"]
    assert telegram["token"] == "${TG_TOKEN}"  # raw text: env references are not expanded
    assert data["channels"]["webhook"]["routes"]["deploy"]["secret"] == "${DEPLOY_SECRET:-s3cret}"


def test_migration_keeps_comments(legacy: Path) -> None:
    migrate_file(legacy)
    text = legacy.read_text(encoding="utf-8")
    for comment in (
        "# chatgate config written before config_version existed",
        "# keep this comment",
        "# the telegram bot",
        "# from the environment",
        "# legacy CSV",
        "# CI calls this",
    ):
        assert comment in text


def test_migrated_file_loads_cleanly(legacy: Path) -> None:
    plugins: dict[str, type[BaseModel]] = {"matrix": MatrixConfig}
    with pytest.raises(Exception, match="legacy form"):
        load_config(legacy, env={}, catalog=catalog(plugins))
    migrate_file(legacy)
    loaded = load_config(legacy, env={"TG_TOKEN": "t"}, catalog=catalog(plugins))
    assert loaded.warnings == []
    telegram = loaded.channels["telegram"].config
    assert telegram is not None
    assert telegram.allowed_users == ["111", "222", "333"]
    assert telegram.blocked_users == ["444"]
    assert telegram.group_policy == "mention_only"


def test_second_run_is_a_noop(legacy: Path) -> None:
    first = migrate_file(legacy)
    assert first.backup is not None
    backup = first.backup.read_bytes()
    migrated = legacy.read_bytes()
    second = migrate_file(legacy)
    assert second.applied == []
    assert second.backup is None
    assert legacy.read_bytes() == migrated
    assert first.backup.read_bytes() == backup  # the original is not overwritten


def test_dry_run_writes_nothing(legacy: Path) -> None:
    original = legacy.read_bytes()
    result = migrate_file(legacy, dry_run=True)
    assert len(result.applied) == 3
    assert result.backup is None
    assert legacy.read_bytes() == original
    assert sorted(p.name for p in legacy.parent.iterdir()) == ["gateway.yaml"]


def test_current_file_is_left_alone(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        """
        config_version: 1
        channels:
          telegram: {dm_policy: open, group_policy: observe, allowed_users: [1]}
        """,
    )
    before = path.read_bytes()
    assert migrate_file(path).applied == []
    assert path.read_bytes() == before
    assert not path.with_name("gateway.yaml.bak").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# nothing yet\n#  gateway: {}\n", "# nothing yet\n#  gateway: {}\nconfig_version: 1\n"),
        ("", "config_version: 1\n"),
    ],
)
def test_empty_file_only_gets_a_stamp(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(text, encoding="utf-8")
    result = migrate_file(path)
    assert result.applied == [f"stamped config_version: {CONFIG_VERSION}"]
    assert path.read_text(encoding="utf-8") == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("config_version: 99\n", "99 is newer", id="newer"),
        pytest.param("config_version: v1\n", "must be an integer", id="not-int"),
        pytest.param("gateway: {}\ngateway: {}\n", "gateway: duplicate key", id="duplicate"),
        pytest.param("gateway:\n  http: [1\n", "YAML syntax error", id="syntax"),
        pytest.param("- a\n- b\n", "mapping of sections", id="not-a-mapping"),
    ],
)
def test_refuses_to_migrate(tmp_path: Path, text: str, fragment: str) -> None:
    path = write_config(tmp_path, text)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=fragment):
        migrate_file(path)
    assert path.read_bytes() == before
    assert not path.with_name("gateway.yaml.bak").exists()


def test_duplicate_key_error_names_line_not_value(tmp_path: Path) -> None:
    path = write_config(tmp_path, "gateway:\n  api_token: one-secret\n  api_token: two-secret\n")
    with pytest.raises(ValueError) as info:
        migrate_file(path)
    assert "gateway.api_token" in str(info.value)
    assert "gateway.yaml:3" in str(info.value)
    assert "one-secret" not in str(info.value)
    assert "two-secret" not in str(info.value)


@pytest.mark.parametrize(
    ("channel", "expected"),
    [
        ({"allowed_users": "1,2, 3,"}, ["1", "2", "3"]),
        ({"allowed_users": ""}, []),
        ({"allowed_users": 77}, [77]),
        ({"allowed_users": ["5"]}, ["5"]),
    ],
)
def test_migrate_document_id_lists(channel: dict[str, Any], expected: list[Any]) -> None:
    data: dict[str, Any] = {"channels": {"telegram": dict(channel)}}
    migrate_document(data)
    assert data["channels"]["telegram"]["allowed_users"] == expected
    assert data["channels"]["telegram"]["group_policy"] == "mention_only"
    assert data["config_version"] == CONFIG_VERSION


def test_migrate_document_keeps_an_explicit_group_policy() -> None:
    data: dict[str, Any] = {
        "config_version": CONFIG_VERSION,
        "channels": {"telegram": {"group_policy": "respond_all"}, "webhook": {"routes": {}}},
    }
    assert migrate_document(data) == []
    assert data["channels"] == {
        "telegram": {"group_policy": "respond_all"},
        "webhook": {"routes": {}},
    }
