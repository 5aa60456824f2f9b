"""The approval store contract, run against each backend (SQLite here, Redis in tests/redis):
two store objects stand for two processes or replicas on one state."""

from __future__ import annotations

from chatgate.policies.approvals import ApprovalState, Deciders
from chatgate.state.approvals import ApprovalRecord, ApprovalStore

NOW = 1_800_000_000.0


def record(ident: str = "a" * 20, chat: str = "c1", at: float = NOW) -> ApprovalRecord:
    return ApprovalRecord(
        id=ident,
        key="tg:m1",
        session="default:tg:c1",
        agent="default",
        tool="fake.add",
        arguments={"a": 1, "token": "***"},
        deciders=Deciders("tg", chat, "u1"),
        prompt=("tg", chat, None),
        created_at=at,
        expires_at=at + 300,
        language="de",
    )


async def check_contract(one: ApprovalStore, two: ApprovalStore) -> None:
    first = await one.create(record())
    assert first == record()
    again = await two.create(record(at=NOW + 50))  # the same call asked again: the first stays
    assert again.created_at == NOW and again.state is ApprovalState.PENDING
    await one.set_prompt(first.id, ["m-9"])
    await one.create(record("b" * 20, chat="c2"))
    assert [r.id for r in await two.pending_in("tg", "c1", NOW + 1)] == [first.id]
    assert await two.pending_in("tg", "c1", NOW + 301) == []  # expired
    decided, changed = await two.decide(first.id, ApprovalState.APPROVED, "tg:u1", NOW + 5)
    assert changed and decided is not None
    assert (decided.state, decided.decided_by, decided.decided_at) == (
        ApprovalState.APPROVED,
        "tg:u1",
        NOW + 5,
    )
    assert list(decided.prompt_ids) == ["m-9"]
    late, changed = await one.decide(first.id, ApprovalState.TIMED_OUT, "", NOW + 400)
    assert not changed and late is not None and late.state is ApprovalState.APPROVED
    assert await one.pending_in("tg", "c1", NOW + 6) == []
    assert await one.decide("c" * 20, ApprovalState.DENIED, "x", NOW) == (None, False)
    assert await two.get("c" * 20) is None
    assert [r.id for r in await two.for_message("tg:m1")] == [first.id, "b" * 20]
    assert await two.for_message("tg:other") == []
    stored = await one.get(first.id)
    assert stored is not None and stored.arguments == {"a": 1, "token": "***"}
    assert stored.language == "de" and stored.deciders == Deciders("tg", "c1", "u1")
