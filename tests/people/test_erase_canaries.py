"""Privacy requests end to end, on SQLite and on Redis: canaries planted for one person in every
store are shown, exported, then erased, and found nowhere afterwards (the whole state dir, every
Redis key, the outgoing-file store); another person's data is intact; a redelivery of an erased
message is recognised and not answered again; a shared session's next turn carries no erased
line to the model."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from chatgate.gateway.app import Gateway
from chatgate.model.messages import Target
from chatgate.policies.approvals import Deciders
from chatgate.policies.takeover import Pause
from chatgate.state.approvals import KV_NAME, ApprovalRecord, ApprovalStore
from chatgate.state.personal import spill_file
from tests.fakes.llm import FakeLLM
from tests.harness import fake_agent, http, memory, operator, running, url, write_config
from tests.redis.replicas_support import redis_lines

ALICE, BOB = "memory:alice", "memory:bob"
CANARY = "CANARY7f3a"  # every string of Alice's carries it
KEEP = "KEEPb0b9"  # every string of Bob's


def config(tmp_path: Path, llm: FakeLLM, redis_url: str | None) -> Path:
    store = redis_lines(redis_url, "privacy", 2) if redis_url else ""
    return write_config(
        tmp_path,
        f"""{store}{fake_agent(llm, "sk-test", 30)}
budgets:
  - {{name: per-user, scope: user, period: day, limit_turns: 1000}}
channels:
  memory: {{dm_policy: open}}
""",
    )


async def _say(gw: Gateway, text: str, user: str, chat: str, mid: str, group: bool) -> str:
    kind = "group" if group else "direct"
    sub = await memory(gw).inject(
        text, sender_id=user, chat_id=chat, chat_kind=kind, message_id=mid, mention=group,
        sender_name=text.split()[0],
    )  # fmt: skip
    await sub.result
    return sub.key


async def plant(gw: Gateway, who: str, tag: str) -> dict[str, str]:
    """Messages (DM and group), a dead letter carrying a reply file, a pairing request, a tool
    approval and a chat pause, each with ``tag`` in it."""
    state, now = gw.rt.state, gw.rt.clock.time()
    dm = await _say(gw, f"{tag} private note of {who}", who, f"{who}-dm", f"{who}-1", False)
    group = await _say(gw, f"{tag} said in the group by {who}", who, "g1", f"{who}-2", True)
    files = gw.rt.delivery.files
    assert files is not None
    ref = (f"{tag.lower()}{who}" + "0" * 32)[:32]
    ref = "".join(c if c in "0123456789abcdef" else "a" for c in ref)
    await _write(files.path_of(ref), f"{tag} file bytes".encode())
    message = {"blocks": [{"type": "text", "text": f"{tag} undelivered"},
                          {"type": "file", "ref": ref, "name": "a.txt"}]}  # fmt: skip
    await state.dead_letters.add(
        Target("memory", f"{who}-dm"), message, "forbidden", "gone", 3, now, inbound_key=dm
    )
    await state.pairing.request("memory", who, f"{tag} name", f"{who}-dm", now)
    approvals = state.stores.kv[KV_NAME]
    assert isinstance(approvals, ApprovalStore)
    await approvals.create(
        ApprovalRecord(
            f"ap-{who}", dm, f"default:memory:{who}-dm", "default", "send",
            {"text": f"{tag} tool argument"}, Deciders("memory", f"{who}-dm", who),
            ("memory", f"{who}-dm", None), now, now + 600,
        )
    )  # fmt: skip
    await state.pauses.put(Pause(f"memory:{who}-dm", now, None, "cli"))
    spilled = {"at": now, "session": f"default:memory:{who}-dm", "epoch": 0, "error": "X",
               "messages": [{"role": "user", "content": f"{tag} spilled", "source": dm}]}  # fmt: skip
    spill_file(gw.rt.state_dir).parent.mkdir(exist_ok=True)
    with spill_file(gw.rt.state_dir).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(spilled) + "\n")
    job = {"id": f"job-{who}", "every_s": 86400, "prompt": f"{tag} reminder",
           "deliver": {"to": f"memory:{who}-dm"}, "owner": f"memory:{who}"}  # fmt: skip
    assert (await api(gw, "POST", "/api/jobs", job))["job"]["owner"] == f"memory:{who}"
    return {"dm": dm, "group": group, "ref": ref}


async def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def files_with(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


async def redis_with(redis_url: str, needle: str) -> list[str]:
    client = Redis.from_url(redis_url, decode_responses=True)
    found = []
    try:
        async for key in client.scan_iter(count=500):
            kind = await client.type(key)
            if kind == "string":
                values: Any = [await client.get(key)]
            elif kind == "hash":
                values = await client.hgetall(key)
                values = list(values.items())
            elif kind == "list":
                values = await client.lrange(key, 0, -1)
            elif kind == "set":
                values = list(await client.smembers(key))
            elif kind == "zset":
                values = await client.zrange(key, 0, -1)
            else:
                values = []
            if needle in key or needle in json.dumps(values):
                found.append(key)
    finally:
        await client.aclose()
    return found


async def api(gw: Gateway, method: str, path: str, body: Any = None) -> dict[str, Any]:
    async with (
        http() as session,
        session.request(method, url(gw, path), json=body, headers=operator(gw)) as r,
    ):
        answer: dict[str, Any] = await r.json()
        assert r.status in (200, 201), answer
        return answer


async def archive(gw: Gateway, person: str) -> dict[str, bytes]:
    """The streamed archive's members by name."""
    async with (
        http() as session,
        session.post(
            url(gw, "/api/people/export"), json={"person": person}, headers=operator(gw)
        ) as r,
    ):
        assert r.status == 200 and r.headers["Content-Type"] == "application/gzip"
        data = await r.read()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {
            m.name.split("/", 1)[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
        }


async def test_erase_leaves_no_canary_and_keeps_the_others(
    tmp_path: Path, fake_llm: FakeLLM, mode: str | None
) -> None:
    async with running(config(tmp_path, fake_llm, mode)) as gw:
        alice = await plant(gw, "alice", CANARY)
        await plant(gw, "bob", KEEP)
        state_dir = gw.rt.state_dir

        shown = await api(gw, "GET", f"/api/people/show?person={ALICE}")
        counts = {name: s["count"] for name, s in shown["stores"].items()}
        assert counts["journal"] == 2 and counts["transcripts"] == 4, counts
        assert counts["dead_letters"] == counts["approvals"] == counts["outgoing_files"] == 1
        assert counts["pairing"] == counts["chat_marks"] == counts["jobs"] == 1
        assert counts["spilled_transcripts"] == 1 and counts["usage_counters"] == 1
        assert KEEP not in json.dumps(shown)

        exported = await archive(gw, ALICE)
        assert CANARY.encode() in exported["transcripts.json"]
        assert exported[f"files/outgoing_files/{alice['ref']}"] == f"{CANARY} file bytes".encode()
        assert not any(KEEP.encode() in v for v in exported.values())

        erased = await api(gw, "POST", "/api/people/erase", {"person": ALICE})
        by_store = {e["store"]: e for e in erased["erased"]}
        assert by_store["journal"]["tombstones"] == 2

        assert files_with(state_dir, CANARY.encode()) == []
        if mode:
            assert await redis_with(mode, CANARY) == []
        assert files_with(state_dir, KEEP.encode()) != [] or mode
        bob = await api(gw, "GET", f"/api/people/show?person={BOB}")
        assert {n: s["count"] for n, s in bob["stores"].items()} == counts
        if mode:
            assert await redis_with(mode, KEEP) != []

        # A redelivery of an erased message is a duplicate: not answered again.
        sent = len(memory(gw).sent)
        again = await memory(gw).inject(
            "redelivered", sender_id="alice", chat_id="alice-dm", message_id="alice-1"
        )
        assert again.duplicate
        await again.result
        assert len(memory(gw).sent) == sent

        # The shared group session's next turn shows the model none of Alice's lines.
        fake_llm.requests.clear()
        await _say(gw, f"{KEEP} again", "bob", "g1", "bob-3", True)
        context = json.dumps(fake_llm.requests[-1].messages)
        assert CANARY not in context and f"{KEEP} said in the group" in context

        audit = await api(gw, "GET", "/api/people/audit")
        mine = [r["action"] for r in audit["records"] if r["person"] == ALICE]
        assert mine == ["erased", "exported", "shown"]
        assert CANARY not in json.dumps(audit)
