"""The Matrix crypto store in Redis: what one replica's store wrote, the next replica's store
reads back (account, olm sessions, room keys, devices, cross-signing, replay indices), and a
Redis that is away is StateUnavailable, never a crash."""

from __future__ import annotations

from datetime import timedelta

import pytest
from redis.asyncio import Redis

from chatgate.model.errors import StateUnavailable

pytestmark = pytest.mark.redis
pytest.importorskip("olm")

from mautrix.crypto import (  # noqa: E402
    InboundGroupSession,
    OlmAccount,
    OutboundGroupSession,
)
from mautrix.types import (  # noqa: E402
    CrossSigner,
    CrossSigningUsage,
    DeviceID,
    DeviceIdentity,
    EventID,
    IdentityKey,
    RoomID,
    SessionID,
    SigningKey,
    TrustState,
    UserID,
)

from chatgate.channels.matrix.crypto_store import RedisCryptoStore  # noqa: E402

PREFIX = "cg:matrix:m:@bot:hs:e2ee"
ROOM = RoomID("!room:hs")
ALICE = UserID("@alice:hs")


async def _fresh(client: Redis) -> RedisCryptoStore:
    store = RedisCryptoStore(client, PREFIX, "@bot:hs")
    await store.open()
    return store


async def test_a_second_replica_reads_what_the_first_wrote(client: Redis) -> None:
    first = await _fresh(client)
    account = OlmAccount()
    account.shared = True
    await first.put_device_id(DeviceID("CHATGATE"))
    await first.put_account(account)

    peer = OlmAccount()
    peer.generate_one_time_keys(1)
    [otk] = peer.one_time_keys["curve25519"].values()
    olm_session = account.new_outbound_session(peer.identity_key, otk)
    await first.add_session(peer.identity_key, olm_session)

    outbound = OutboundGroupSession(ROOM)
    inbound = InboundGroupSession(
        outbound.session_key, peer.signing_key, peer.identity_key, ROOM, max_age=timedelta(days=1)
    )
    session_id = SessionID(inbound.id)
    await first.put_group_session(ROOM, peer.identity_key, session_id, inbound)
    outbound.shared = True
    cipher = outbound.encrypt("hello")
    await first.add_outbound_group_session(outbound)
    assert await first.validate_message_index(
        peer.identity_key, session_id, EventID("$e1"), 0, 1000
    )
    device = DeviceIdentity(
        ALICE,
        DeviceID("PHONE"),
        peer.identity_key,
        peer.signing_key,
        TrustState.UNVERIFIED,
        False,
        "phone",
    )
    await first.put_devices(ALICE, {DeviceID("PHONE"): device})
    await first.put_cross_signing_key(ALICE, CrossSigningUsage.MASTER, SigningKey("mk"))
    target, signer = CrossSigner(ALICE, SigningKey("dev")), CrossSigner(ALICE, SigningKey("mk"))
    await first.put_signature(target, signer, "sig")

    second = await _fresh(client)
    assert second.pickle_key == first.pickle_key
    assert await second.get_device_id() == "CHATGATE"
    loaded = await second.get_account()
    assert loaded is not None and loaded.shared
    assert loaded.identity_key == account.identity_key
    [sessions] = [await second.get_sessions(peer.identity_key)]
    assert [s.id for s in sessions] == [olm_session.id]
    room_key = await second.get_group_session(ROOM, session_id)
    assert room_key is not None and room_key.decrypt(cipher)[0] == "hello"
    assert room_key.sender_key == peer.identity_key and room_key.max_age == timedelta(days=1)
    kept = await second.get_outbound_group_session(ROOM)
    assert kept is not None and (kept.id, kept.shared, kept.message_count) == (outbound.id, True, 1)
    assert not await second.validate_message_index(  # a replay under another event id
        peer.identity_key, session_id, EventID("$other"), 0, 1000
    )
    assert await second.get_device(ALICE, DeviceID("PHONE")) == device
    assert (await second.get_cross_signing_keys(ALICE))[CrossSigningUsage.MASTER].key == "mk"
    assert await second.is_key_signed_by(target, signer)


async def test_removed_and_deleted_keys_stay_gone_for_the_next_replica(client: Redis) -> None:
    first = await _fresh(client)
    await first.put_account(OlmAccount())
    outbound = OutboundGroupSession(ROOM)
    await first.add_outbound_group_session(outbound)
    peer = OlmAccount()
    inbound = InboundGroupSession(outbound.session_key, peer.signing_key, peer.identity_key, ROOM)
    await first.put_group_session(ROOM, peer.identity_key, SessionID(inbound.id), inbound)
    await first.remove_outbound_group_session(ROOM)
    assert await first.redact_group_sessions(ROOM, IdentityKey(""), "left") == [inbound.id]
    await first.delete()

    second = await _fresh(client)
    assert await second.get_account() is None
    assert await second.get_outbound_group_session(ROOM) is None
    assert not await second.has_group_session(ROOM, SessionID(inbound.id))


async def test_a_redis_that_is_away_is_state_unavailable() -> None:
    gone = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    store = RedisCryptoStore(gone, PREFIX, "@bot:hs")
    with pytest.raises(StateUnavailable):
        await store.open()
    with pytest.raises(StateUnavailable):
        await store.put_account(OlmAccount())
    await gone.aclose()
