"""TurnLock on Redis: one turn per session cluster-wide.

`SET key token NX PX ttl` takes the lease; release and renew are compare-and-delete /
compare-and-extend Lua scripts, so a stale token never frees or extends a later holder's lease
(a lock that vanished, as with Redis's data, is taken again by its holder).
The token names the replica (`gateway.redis.replica_id`), so `redis-cli GET` tells an operator who
holds a session. `hold` renews the lease every third of the TTL while the turn runs (sooner after
a failed renewal); a dead replica's lease simply expires. Leaving `hold` stops the keeper, letting a
renewal under way finish (its connection stays in the pool) but never longer than `STOP_WAIT_S`:
a renewal stuck in a dead connection cannot keep the turn (and the lock) open.
When Redis cannot be reached the lock fails closed (`StateUnavailable`): the turn is left to the
journal instead of risking two turns of one session at once. A turn cut short by the state
(`strand`) passes its lock on to its own resumed turn instead of freeing it, as soon as Redis
answers: a later message of the session on another replica cannot go first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence

from redis.asyncio import Redis
from redis.exceptions import RedisError

from chatgate.clock import Clock, SystemClock
from chatgate.config.models import GatewaySection
from chatgate.model.errors import GaveWay, StateUnavailable
from chatgate.state.records import LeaseToken
from chatgate.state.redis.client import (
    LOCK_CONNECTIONS,
    Keys,
    cancel_safe,
    connect,
    replica_id,
)
from chatgate.state.redis.journal import open_index
from chatgate.state.redis.lock_scripts import (
    KEEP_PASSED,
    PASS_ON,
    RELEASE,
    RELEASE_PREFIXED,
    RENEW,
    STRAND,
    TAKE,
    TAKE_OVER,
)

log = logging.getLogger("chatgate.turnlock")
HANDOFF = "handoff:"  # a lock passed on with a handed-off answer: handoff:<message key>
TO_REPLICA = HANDOFF + "@"  # one passed on to the replica that adopted its message
POLL_MIN_S = 0.02
POLL_MAX_S = 0.25
RETRY_FRACTION = 10  # after a failed renewal, retry every ttl/10 (not ttl/3)
STOP_WAIT_S = 1.0
GIVEN_UP_SESSIONS = 1024
GIVEN_UP_PER_SESSION = 8
KEEP_TTLS = 3  # a passed-on lock is kept at most this many TTLs: a turn that never takes it
# (its batch led by another message) must not hold the session for as long as the replica lives


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisTurnLock:
    def __init__(
        self,
        redis: Redis,
        prefix: str,
        clock: Clock | None = None,
        replica: str | None = None,
        *,
        owns_client: bool = True,
        gate_s: float = 0.0,
    ) -> None:
        self._redis = redis
        self._gate_s = gate_s  # after a wipe: how long free locks wait for those taken back
        self._owns_client = owns_client  # False: the stores' client, which they close
        self.replica = replica
        self._keys = Keys(prefix)
        self._clock = clock or SystemClock()
        self._release = redis.register_script(RELEASE)
        self._renew = redis.register_script(RENEW)
        self._release_prefixed = redis.register_script(RELEASE_PREFIXED)
        self._take_over = redis.register_script(TAKE_OVER)
        self._take_free = redis.register_script(TAKE)
        self._pass_on = redis.register_script(PASS_ON)
        self._strand = redis.register_script(STRAND)
        self._keep_passed = redis.register_script(KEEP_PASSED)
        self._unreleased: dict[str, str] = {}  # lock key → token whose release failed
        self._passing: dict[str, str] = {}  # token → the message key its lock goes on with
        self._stranding: dict[str, str] = {}  # token → the message its failed turn left
        # lock key → (token or '', hand-off value, give up at, ttl): locks to pass on to a turn
        # cut short by the state, once Redis answers and the lock is this replica's or free
        self._stranded: dict[str, tuple[str, str, float, float]] = {}
        # lock key → (hand-off value, ttl, next renewal at, kept until): locks passed on to a
        # message of this replica's whose resumed turn has not taken them yet, kept while it
        # holds the message (at most KEEP_TTLS TTLs)
        self._passed: dict[str, tuple[str, float, float, float]] = {}
        self._retrier: asyncio.Task[None] | None = None  # retries those while any is left
        self._holding: dict[str, tuple[str, float]] = {}  # lock key → (token held, its ttl)
        self._given_up: dict[str, list[str]] = {}  # session → earlier messages not waited for

    def _key(self, session: str) -> str:
        return self._keys("lock", session)

    async def acquire(
        self,
        key: str,
        *,
        owner: str,
        ttl: float,
        after: str | None = None,
        give_way: Callable[[], bool] | None = None,
        from_dead: bool = False,
        batch: Sequence[str] = (),
    ) -> LeaseToken:
        token = f"{self.replica or owner}/{uuid.uuid4().hex}"
        await self._retry()
        wait = POLL_MIN_S
        ours = "\n".join(batch or ([after] if after is not None else []))
        waited_from: float | None = None  # since when the free lock waits for earlier messages
        while True:
            try:
                took = await self._take(key, token, ttl, after, from_dead, ours)
            except RedisError as exc:
                raise StateUnavailable(
                    f"turn lock: redis unreachable ({type(exc).__name__})"
                ) from exc
            if isinstance(took, str):  # the free lock waits for an earlier message, a TTL at most
                now = self._clock.monotonic()
                waited_from = now if waited_from is None else waited_from
                if now - waited_from >= ttl:
                    self._give_up(key, took)
                took = False
            if took:
                if after is not None:  # the turn a lock waited for: nothing more to pass on
                    self._took_stranded(key, after)
                return LeaseToken(key, owner, self._clock.monotonic() + ttl, token)
            if give_way is not None and give_way():
                raise GaveWay(key)
            await asyncio.sleep(wait)  # real time: the holder's lease runs on Redis's clock
            wait = min(POLL_MAX_S, wait * 2)

    async def _take(
        self, key: str, token: str, ttl: float, after: str | None, from_dead: bool, ours: str
    ) -> bool | str:
        """Whether the lock is mine now; or the earlier open message of the session that the
        free lock waits for (``ours``: the turn's messages, newline-joined)."""
        keys = [self._key(key), self._keys("turn-gate")]
        mine = TO_REPLICA + token.split("/", 1)[0]
        if after is None:
            return bool(await self._take_free(keys=keys, args=[token, _ms(ttl), mine]))
        dead = self._keys("replica", "") if from_dead else ""
        given_up = "\n".join(self._given_up.get(key, ()))
        args: list[str | int] = [token, _ms(ttl), HANDOFF + after, dead, mine, ours]
        args += [self._keys("journal", "e", ""), given_up]
        keys.append(open_index(self._keys, key))
        took = await self._take_over(keys=keys, args=args)
        if isinstance(took, bytes | str):
            return took.decode() if isinstance(took, bytes) else took
        return bool(took)

    def _give_up(self, session: str, message_key: str) -> None:
        """Stop waiting for ``message_key`` before ``session``'s free lock (it stayed open for a
        whole TTL: its holder lost it, or never runs it); remembered for a bounded number of
        sessions, so later turns do not wait for it again."""
        keys = self._given_up.pop(session, [])
        self._given_up[session] = [*keys[-(GIVEN_UP_PER_SESSION - 1) :], message_key]
        while len(self._given_up) > GIVEN_UP_SESSIONS:
            del self._given_up[next(iter(self._given_up))]
        log.warning(
            "turn no longer waits for an earlier message of its session",
            extra={"session": session, "key": message_key},
        )

    def pass_on(self, token: LeaseToken, message_key: str) -> None:
        self._passing[token.token] = message_key

    def strand(self, session: str, message_key: str, token: LeaseToken | None, ttl: float) -> None:
        """The turn of ``message_key`` failed on the state: its session's lock (held by
        ``token``, or free when it could not be taken) goes on to that message's resumed turn
        (`hold`'s ``after``), now or once Redis answers; the oldest such message first."""
        if token is not None:
            self._stranding[token.token] = message_key
            return
        give_up = self._clock.monotonic() + ttl
        value = HANDOFF + message_key
        self._stranded.setdefault(self._key(session), ("", value, give_up, ttl))
        self._poke()

    def _poke(self) -> None:
        if (self._stranded or self._passed) and (self._retrier is None or self._retrier.done()):
            self._retrier = asyncio.ensure_future(self._retry_while_stranded())

    async def _retry_while_stranded(self) -> None:
        """Pass the locks of cut-short turns on as soon as Redis answers again (or the lock is
        free), not at the next check: a later message of their sessions would go first; and
        keep those passed on until their resumed turns take them."""
        while self._stranded or self._passed:
            await asyncio.sleep(POLL_MAX_S)  # real time: the locks run on Redis's clock
            try:
                await self._retry()
                await self._keep_due()
            except Exception as exc:  # not a Redis error (those wait for the next round)
                log.warning("turn lock retry failed", extra={"error": type(exc).__name__})

    def _keeping(self, key: str, value: str, ttl: float) -> None:
        """Keep ``key``, passed on to ``value``'s message of this replica, from running out while
        Redis restarts again and again before that message's resumed turn takes it."""
        if self.replica:
            now = self._clock.monotonic()
            self._passed[key] = (value, ttl, now + ttl / 3, now + KEEP_TTLS * ttl)

    async def _keep_due(self) -> None:
        """Extend the passed-on locks due (a third of their TTL on), while each one still waits
        for its message and that message is still this replica's and open; else let it go."""
        now = self._clock.monotonic()
        for key, (value, ttl, due, until) in list(self._passed.items()):
            if due > now:
                continue
            if until <= now:  # runs out by itself now (its TTL from the last extension)
                self._passed.pop(key, None)
                continue
            entry = self._keys("journal", "e", value.removeprefix(HANDOFF))
            args: list[str | int] = [value, self.replica or "", _ms(ttl)]
            try:
                kept = await self._keep_passed(keys=[key, entry], args=args)
            except RedisError:
                return  # the next round tries again
            if kept:
                self._passed[key] = (value, ttl, now + ttl / 3, until)
            else:
                self._passed.pop(key, None)

    def _took_stranded(self, session: str, message_key: str) -> None:
        key, value = self._key(session), HANDOFF + message_key
        waiting = self._stranded.get(key)
        if waiting is not None and waiting[1] == value:
            del self._stranded[key]
        passed = self._passed.get(key)
        if passed is not None and passed[0] == value:
            del self._passed[key]

    async def retry_pending(self) -> None:
        """Pass on (or free) the locks that Redis could not take while it was away; raises
        `StateUnavailable` while it still cannot (the state probe asks this too)."""
        retried = await self._retry()
        self._poke()  # a lock passed on just now is kept from here
        if not retried:
            raise StateUnavailable("turn lock: redis unreachable")

    async def restore(self, handed: Mapping[str, str], ttl: float) -> int:
        """Take again (only where free: a lock taken since stays) the locks held here and the
        ones passed on with what ``handed`` names, after Redis lost its data. Free locks wait
        ``gate_s`` from now (every replica notices the loss within half a lease TTL), so every
        replica's locks are back before a later message of their sessions takes one."""
        wanted = {k: (token, px) for k, (token, px) in self._holding.items()}
        for session, message_key in handed.items():
            wanted.setdefault(self._key(session), (HANDOFF + message_key, ttl))
            self._keeping(self._key(session), HANDOFF + message_key, ttl)
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                if self._gate_s > 0:
                    pipe.set(self._keys("turn-gate"), self.replica or "", px=_ms(self._gate_s))
                for key, (token, px) in wanted.items():
                    pipe.set(key, token, nx=True, px=_ms(px))
                taken = await pipe.execute()
        except RedisError as exc:
            raise StateUnavailable(f"turn lock: redis unreachable ({type(exc).__name__})") from exc
        self._poke()
        return sum(1 for t in taken[-len(wanted) :] if t) if wanted else 0

    async def _leave(self, token: LeaseToken, ttl: float) -> None:
        """Release ``token``, or pass its lock on when its answer was handed off, or to its own
        resumed turn (or an earlier message's of the session) when the state cut it short."""
        key = self._key(token.key)
        stranded = self._stranding.pop(token.token, None)
        waiting = self._stranded.get(key)
        if stranded is not None or waiting is not None:
            self._passing.pop(token.token, None)
            value = waiting[1] if waiting is not None else HANDOFF + str(stranded)
            self._stranded[key] = (token.token, value, self._clock.monotonic() + ttl, ttl)
            await self._retry()
            self._poke()
            return
        passing = self._passing.pop(token.token, None)
        if passing is None:
            await self.release(token)
            return
        try:
            keys = [self._key(token.key), self._keys("journal", "e", passing)]
            args: list[str | int] = [
                token.token,
                HANDOFF + passing,
                _ms(ttl),
                self.replica or "",
                TO_REPLICA,
            ]
            await self._pass_on(keys=keys, args=args)
        except RedisError as exc:  # passed on once Redis answers, while still mine or free
            value = HANDOFF + passing
            self._stranded.setdefault(key, (token.token, value, self._clock.monotonic() + ttl, ttl))
            self._poke()
            log.warning(
                "turn lock not passed on with a handed-off answer; retried when Redis answers",
                extra={"session": token.key, "error": type(exc).__name__},
            )

    async def renew(self, token: LeaseToken, ttl: float) -> bool:
        try:
            renewal = self._renew(keys=[self._key(token.key)], args=[token.token, _ms(ttl)])
            kept = await cancel_safe(renewal)
        except RedisError as exc:
            raise StateUnavailable(f"turn lock: redis unreachable ({type(exc).__name__})") from exc
        return bool(kept)

    async def release(self, token: LeaseToken) -> None:
        try:
            await self._release(keys=[self._key(token.key)], args=[token.token])
        except RedisError as exc:  # retried before the next acquire; else it runs out
            self._unreleased[self._key(token.key)] = token.token
            log.warning(
                "turn lock release failed; retried when Redis answers again",
                extra={"session": token.key, "error": type(exc).__name__},
            )

    async def _retry(self) -> bool:
        """Pass on the locks of turns the state cut short (where another holder has one, as soon
        as it is free, until their TTL), then free the locks whose release failed while Redis
        was away (else the session would wait out their TTL after a blip); False at the first
        error."""
        now = self._clock.monotonic()
        for key, (token, value, give_up, ttl) in list(self._stranded.items()):
            if give_up <= now:
                self._stranded.pop(key, None)
                continue
            px = _ms(give_up - now)
            try:
                passed = await self._strand(keys=[key], args=[token, value, px])
            except RedisError:
                return False
            if passed:
                self._stranded.pop(key, None)
                self._unreleased.pop(key, None)
                self._keeping(key, value, ttl)
            elif token:  # another holder has it: passed on as soon as it is free, until then
                self._stranded[key] = ("", value, give_up, ttl)
        for key, token in list(self._unreleased.items()):
            try:
                await self._release(keys=[key], args=[token])
            except RedisError:
                return False
            self._unreleased.pop(key, None)
        return True

    async def release_leftovers(self) -> int:
        """Free every lock a previous process with this replica id left behind (killed
        mid-turn): its turns are over, and the journal resumes them. Called once at start."""
        if not self.replica:
            return 0
        freed = 0
        try:
            async for key in self._redis.scan_iter(match=self._key("*"), count=500):
                freed += int(await self._release_prefixed(keys=[key], args=[f"{self.replica}/"]))
        except RedisError as exc:
            raise StateUnavailable(f"turn lock: redis unreachable ({type(exc).__name__})") from exc
        return freed

    async def aclose(self) -> None:
        """Close this lock's own client and its connections (a shared one is the stores')."""
        if self._retrier is not None:
            self._retrier.cancel()
            await asyncio.gather(self._retrier, return_exceptions=True)
        if self._owns_client:
            await self._redis.aclose()

    @contextlib.asynccontextmanager
    async def hold(
        self,
        key: str,
        *,
        owner: str,
        ttl: float,
        after: str | None = None,
        give_way: Callable[[], bool] | None = None,
        from_dead: bool = False,
        batch: Sequence[str] = (),
    ) -> AsyncIterator[LeaseToken]:
        lease = await self.acquire(
            key,
            owner=owner,
            ttl=ttl,
            after=after,
            give_way=give_way,
            from_dead=from_dead,
            batch=batch,
        )
        stop = asyncio.Event()
        keeper = asyncio.ensure_future(self._keep(lease, ttl, stop))
        self._holding[self._key(key)] = (lease.token, ttl)
        try:
            yield lease
        finally:
            self._holding.pop(self._key(key), None)
            # A renewal under way finishes (cancelling a command mid-reply makes redis-py drop
            # its connection, and the pool dial a new one); one stuck is cancelled after a bound.
            stop.set()
            await asyncio.wait([keeper], timeout=STOP_WAIT_S)
            if not keeper.done():
                keeper.cancel()
                await asyncio.wait([keeper], timeout=STOP_WAIT_S)
            await self._leave(lease, ttl)

    async def _stopped_within(self, stop: asyncio.Event, seconds: float) -> bool:
        """Wait ``seconds`` on the injected clock or until ``stop``; whether it was stopped."""
        sleeper = asyncio.ensure_future(self._clock.sleep(seconds))
        stopper = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({sleeper, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            stopper.cancel()
        return stop.is_set()

    async def _keep(self, lease: LeaseToken, ttl: float, stop: asyncio.Event) -> None:
        """Renew every third of the TTL until ``stop``; a lost lease is logged loudly (another
        replica may now run this session; this turn still delivers the answer it produced)."""
        pause = ttl / 3
        while not stop.is_set():
            if await self._stopped_within(stop, pause):
                return
            try:
                if not await self.renew(lease, ttl):
                    log.error(
                        "turn lock lease lost while the turn ran", extra={"session": lease.key}
                    )
                    return
                pause = ttl / 3
            except StateUnavailable:
                log.warning("turn lock renew failed; retrying", extra={"session": lease.key})
                pause = ttl / RETRY_FRACTION


def build_lock(gateway: GatewaySection, clock: Clock, client: object = None) -> RedisTurnLock:
    """The lock on the stores' client when they are on Redis too (one pool per replica: the
    lock's commands are short and never block), else on a client of its own."""
    prefix, replica = gateway.redis_prefix(), replica_id(gateway)
    gate = 0.75 * gateway.redis.lease_ttl_s  # every replica notices a wipe within half of it
    if isinstance(client, Redis):
        return RedisTurnLock(client, prefix, clock, replica, owns_client=False, gate_s=gate)
    return RedisTurnLock(connect(gateway, LOCK_CONNECTIONS), prefix, clock, replica, gate_s=gate)
