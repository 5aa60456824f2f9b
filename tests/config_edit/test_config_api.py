"""/api/config on a real in-process gateway: the view (token only, secrets masked, sources), the
check (issues with key path and line), and an apply that writes atomically, keeps the previous
version, hot-reloads (the next message meets the new rate limit) and is audited."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from chatgate.gateway.app import Gateway
from tests.harness import http, memory, operator, running, write_config

PASSWORD = "s3cr3t-Pa55word-xyz"  # in clear in the file on purpose (a hand-written file)
CONFIG = f"""  rate_limits:
    # generous while we test
    per_sender: {{rate_per_s: 5, burst: 50}}
  redis:
    url: "redis://:{PASSWORD}@127.0.0.1:6379/0"
agents:
  default: {{backend: echo}}
channels:
  memory:
    dm_policy: open
"""


async def call(
    gw: Gateway, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    async with http() as session:
        address = f"http://127.0.0.1:{gw.port}{path}"
        chosen = operator(gw) if headers is None else headers
        async with session.request(method, address, json=body, headers=chosen) as resp:
            return resp.status, dict(await resp.json())


def edited(text: str, old: str, new: str) -> str:
    assert old in text, text
    return text.replace(old, new)


async def test_the_view_needs_the_token_even_without_a_configured_one(tmp_path: Path) -> None:
    async with running(write_config(tmp_path, CONFIG)) as gw:
        for path in ("/api/config", "/api/config/history"):
            status, _ = await call(gw, "GET", path, headers={})
            assert status == 401, path
        status, _ = await call(gw, "GET", "/api/status", headers={})
        assert status == 200  # other reads stay open on loopback without a configured token


async def test_the_view_masks_secrets_and_names_each_keys_source(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    async with running(path) as gw:
        status, view = await call(gw, "GET", "/api/config")
    assert status == 200
    assert PASSWORD not in str(view)
    assert "url: '**********'" in view["text"]
    assert "# generous while we test" in view["text"]
    sources = {row["key"]: row["source"] for row in view["keys"]}
    line = path.read_text().splitlines().index("    per_sender: {rate_per_s: 5, burst: 50}") + 1
    assert sources["gateway.rate_limits.per_sender.burst"] == f"gateway.yaml:{line}"
    assert sources["gateway.delivery.max_attempts"] == "default"
    assert view["writable"] is True and view["refusal"] is None


async def test_a_bad_value_is_named_with_its_key_path_and_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        bad = edited(view["text"], "burst: 50", "burst: 0")
        status, answer = await call(gw, "POST", "/api/config/check", {"text": bad})
    assert status == 422
    assert answer["reason_code"] == "config_invalid"
    [issue] = answer["issues"]
    line = path.read_text().splitlines().index("    per_sender: {rate_per_s: 5, burst: 50}") + 1
    assert issue["key"] == "gateway.rate_limits.per_sender.burst"
    assert issue["line"] == line
    assert f"(gateway.yaml:{line})" in issue["text"]


async def test_an_apply_writes_keeps_the_old_file_reloads_and_is_audited(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    before = path.read_text()
    async with running(path) as gw:
        chat = memory(gw)
        _, view = await call(gw, "GET", "/api/config")
        text = edited(view["text"], "{rate_per_s: 5, burst: 50}", "{rate_per_s: 0.001, burst: 1}")
        status, checked = await call(gw, "POST", "/api/config/check", {"text": text})
        assert status == 200, checked
        assert checked["changed"] == [
            "gateway.rate_limits.per_sender.burst",
            "gateway.rate_limits.per_sender.rate_per_s",
        ]
        assert "+    per_sender: {rate_per_s: 0.001, burst: 1}" in checked["diff"]
        body = {"text": text, "etag": view["etag"], "by": "dashboard"}
        status, done = await call(gw, "POST", "/api/config/apply", body)
        assert status == 200, done
        assert done["backup"] == "gateway.yaml.1" and done["reload"]["ok"] is True
        first = await (await chat.inject("one", chat_id="c1", message_id="m1")).result
        second = await (await chat.inject("two", chat_id="c1", message_id="m2")).result
        assert first.reason == "text"
        assert second.reason == "rate_limited_sender"  # the new limit, on the next message
        _, history = await call(gw, "GET", "/api/config/history")
    written = path.read_text()
    assert (tmp_path / "gateway.yaml.1").read_text() == before
    assert PASSWORD in written  # the hidden secret was kept, not replaced by the mask
    assert "# generous while we test" in written  # comments survive
    assert written == edited(before, "{rate_per_s: 5, burst: 50}", "{rate_per_s: 0.001, burst: 1}")
    [change] = history["changes"]
    assert change["action"] == "apply" and change["by"] == "dashboard"
    assert change["address"] == "127.0.0.1"
    assert change["changed"] == checked["changed"]
    assert (change["added_lines"], change["removed_lines"]) == (1, 1)
    assert PASSWORD not in str(history)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


async def test_a_file_changed_on_disk_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        path.write_text(path.read_text() + "# someone else's edit\n")
        text = edited(view["text"], "burst: 50", "burst: 40")
        body = {"text": text, "etag": view["etag"]}
        status, refused = await call(gw, "POST", "/api/config/apply", body)
    assert status == 409 and refused["reason_code"] == "config_changed_on_disk"
    assert refused["hint"]
    assert path.read_text().endswith("# someone else's edit\n")
    assert not (tmp_path / "gateway.yaml.1").exists()


async def test_a_new_secret_in_clear_is_refused_and_not_echoed(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    fresh = "redis://:an0ther-Pa55word-abc@127.0.0.1:6379/0"
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        text = edited(view["text"], "'**********'", f'"{fresh}"')
        status, checked = await call(gw, "POST", "/api/config/check", {"text": text})
        assert status == 422 and checked["reason_code"] == "config_clear_secret"
        assert [i["key"] for i in checked["issues"]] == ["gateway.redis.url"]
        assert fresh not in str(checked)
        status, _ = await call(
            gw, "POST", "/api/config/apply", {"text": text, "etag": view["etag"]}
        )
        assert status == 422
        by_reference = edited(view["text"], "'**********'", '"${REDIS_URL}"')
        status, checked = await call(gw, "POST", "/api/config/check", {"text": by_reference})
        assert status == 200, checked
    assert PASSWORD in path.read_text()


async def test_a_configmap_is_refused_with_the_gitops_hint(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    (tmp_path / "..data").symlink_to(tmp_path)
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        assert view["writable"] is False
        assert view["refusal"]["reason_code"] == "config_not_writable"
        text = edited(view["text"], "burst: 50", "burst: 40")
        status, _ = await call(gw, "POST", "/api/config/check", {"text": text})
        assert status == 200  # checking still works
        body = {"text": text, "etag": view["etag"]}
        status, refused = await call(gw, "POST", "/api/config/apply", body)
    assert status == 409 and refused["reason_code"] == "config_not_writable"
    assert "Git" in refused["hint"]
    assert "burst: 50" in path.read_text()


async def test_a_write_from_another_origin_is_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        headers = {**operator(gw), "Origin": "https://evil.example"}
        text = edited(view["text"], "burst: 50", "burst: 40")
        body = {"text": text, "etag": view["etag"]}
        status, refused = await call(gw, "POST", "/api/config/apply", body, headers=headers)
    assert status == 403 and refused["reason_code"] == "cross_origin"
    assert "burst: 50" in path.read_text()


async def test_the_page_and_its_assets_are_served_under_the_pages_policy(tmp_path: Path) -> None:
    async with running(write_config(tmp_path, CONFIG)) as gw, http() as session:
        base = f"http://127.0.0.1:{gw.port}/dashboard/config"
        async with session.get(base) as page:
            assert page.status == 200
            html = await page.text()
            assert "default-src 'none'" in page.headers["Content-Security-Policy"]
        assert 'src="/dashboard/config/static/config.js"' in html and "${VAR}" in html
        for name in ("config.js", "config.css"):
            async with session.get(f"{base}/static/{name}") as asset:
                assert asset.status == 200, name
        async with session.get(f"{base}/static/config.html") as hidden:
            assert hidden.status == 404  # pages only through their route


async def test_a_file_the_reload_refuses_is_put_back_at_once(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    before = path.read_text()
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        # valid to the loader; only building the agent (the reload) finds the module missing
        text = edited(view["text"], "{backend: echo}", "{backend: python, function: nowhere_x:run}")
        status, checked = await call(gw, "POST", "/api/config/check", {"text": text})
        assert status == 200, checked
        body = {"text": text, "etag": view["etag"]}
        status, refused = await call(gw, "POST", "/api/config/apply", body)
        assert status == 422 and refused["reason_code"] == "config_reload_rejected"
        assert "previous one was put back" in refused["error"]
        result = await (await memory(gw).inject("still echo?", chat_id="c1")).result
        assert result.reason == "text" and memory(gw).texts() == ["still echo?"]
        _, history = await call(gw, "GET", "/api/config/history")
    assert path.read_text() == before
    [change] = history["changes"]  # nothing was applied: the attempt is audited as refused
    assert change["refused"] == "config_reload_rejected" and change["reload"] == {}


async def test_editing_can_be_switched_off(tmp_path: Path) -> None:
    path = write_config(tmp_path, "  config_edit: {enabled: false}\n" + CONFIG)
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        assert view["refusal"]["reason_code"] == "config_edit_disabled"
        text = edited(view["text"], "burst: 50", "burst: 40")
        status, refused = await call(
            gw, "POST", "/api/config/apply", {"text": text, "etag": view["etag"]}
        )
    assert status == 403 and refused["reason_code"] == "config_edit_disabled"
    assert "burst: 50" in path.read_text()


async def test_a_file_broken_by_hand_is_shown_and_can_be_fixed_here(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    good = path.read_text()
    async with running(path) as gw:
        path.write_text(good + "agents: [unclosed\n")
        status, view = await call(gw, "GET", "/api/config")
        assert status == 200 and view["text"].endswith("agents: [unclosed\n")
        assert PASSWORD not in str(view)  # the running config's secrets are still masked
        sources = {row["key"]: row["source"] for row in view["keys"]}
        assert sources["gateway.rate_limits.per_sender.burst"].startswith("unknown")
        status, checked = await call(gw, "POST", "/api/config/check", {"text": view["text"]})
        assert status == 422 and checked["issues"][0]["line"] is not None
        fixed = view["text"].removesuffix("agents: [unclosed\n")
        status, refused = await call(gw, "POST", "/api/config/check", {"text": fixed})
        assert status == 422 and refused["issues"][0]["key"] == "gateway.redis.url"
        assert "does not parse, so it cannot be put back" in refused["issues"][0]["message"]
        masked_url = '"**********"'  # the whole URL is the secret
        fixed = edited(fixed, masked_url, '"${REDIS_URL}"')
        status, done = await call(
            gw, "POST", "/api/config/apply", {"text": fixed, "etag": view["etag"]}
        )
        assert status == 200, done
    assert path.read_text() == edited(
        good, f'"redis://:{PASSWORD}@127.0.0.1:6379/0"', '"${REDIS_URL}"'
    )
