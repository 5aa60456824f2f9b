"""Budget counters on Redis, shared by every replica. Reservation and settlement are one Lua
script each, so two replicas never both take the last of a limit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from chatgate.budgets.settling import Later, SettleQueue
from chatgate.budgets.store import WARN_SUFFIX, CallAverage, Spent, refusal_flag, settle_of
from chatgate.config.models import GatewaySection
from chatgate.policies.budgets import Charge, Usage, split_key
from chatgate.state.redis.client import connect, maps_errors

OWN_CONNECTIONS = 8
NO_LIMIT = -1

# Sum a counter's live reservations (dropping expired ones) and read its spend. Shared head of
# the scripts: KEYS come in pairs (counter hash, reservation hash).
_LIVE = """
local function live(c, r, now)
  local rn, rt, ru = 0, 0, 0
  local entries = redis.call('HGETALL', r)
  for j = 1, #entries, 2 do
    local a, b, d, e = string.match(entries[j + 1], '(%S+) (%S+) (%S+) (%S+)')
    if tonumber(e) <= now then
      redis.call('HDEL', r, entries[j])
    else
      rn, rt, ru = rn + tonumber(a), rt + tonumber(b), ru + tonumber(d)
    end
  end
  local v = redis.call('HMGET', c, 'n', 't', 'u')
  return tonumber(v[1] or 0), tonumber(v[2] or 0), tonumber(v[3] or 0), rn, rt, ru
end
"""
# ARGV: ticket, now, expires, ttl_ms, then six numbers per pair: limits (nano, tokens, turns;
# -1: none) and the estimate (nano, tokens, turns). Returns {refused, rows}: refused is 0 (all
# reserved) or the 1-based index of the pair that refused (nothing reserved); rows are each
# counter's use before this reservation (spend and live reservations), for the ladder.
_RESERVE_BODY = """
local now = tonumber(ARGV[2])
local n = #KEYS / 2
local rows, refused = {}, 0
for i = 1, n do
  local sn, st, su, rn, rt, ru = live(KEYS[2 * i - 1], KEYS[2 * i], now)
  rows[i] = {sn, st, su, rn, rt, ru}
  local b = 4 + (i - 1) * 6
  local used = {sn + rn, st + rt, su + ru}
  for k = 1, 3 do
    local limit = tonumber(ARGV[b + k])
    if refused == 0 and limit >= 0 and used[k] + tonumber(ARGV[b + 3 + k]) > limit then
      refused = i
    end
  end
end
if refused == 0 then
  for i = 1, n do
    local b = 4 + (i - 1) * 6
    local r = KEYS[2 * i]
    redis.call('HSET', r, ARGV[1],
      ARGV[b + 4] .. ' ' .. ARGV[b + 5] .. ' ' .. ARGV[b + 6] .. ' ' .. ARGV[3])
    redis.call('PEXPIRE', r, ARGV[4])
  end
end
return {refused, rows}
"""
# KEYS: the agent's average hash, the index set, then (counter, reservation) pairs. ARGV:
# ticket, nano, tokens, turns, 1 to add the call to the average, then each counter's key.
_SETTLE = """
local function settle(KEYS, ARGV)
for i = 1, (#KEYS - 2) / 2 do
  local c, r = KEYS[2 * i + 1], KEYS[2 * i + 2]
  redis.call('HDEL', r, ARGV[1])
  redis.call('HINCRBY', c, 'n', ARGV[2])
  redis.call('HINCRBY', c, 't', ARGV[3])
  redis.call('HINCRBY', c, 'u', ARGV[4])
  redis.call('SADD', KEYS[2], ARGV[5 + i])
end
if ARGV[5] == '1' then
  redis.call('HINCRBY', KEYS[1], 'calls', 1)
  redis.call('HINCRBY', KEYS[1], 'n', ARGV[2])
  redis.call('HINCRBY', KEYS[1], 't', ARGV[3])
end
end
"""
# The queued settles ahead of a script's own work, in the same call. ARGV[1]: how many; each
# then brings its key and argument counts and its KEYS and ARGV as `settle` takes them. K and A
# are what is left: the script's own KEYS and ARGV.
_SETTLES = (
    _SETTLE
    + """
local ki, ai = 1, 2
for s = 1, tonumber(ARGV[1]) do
  local nk, na = tonumber(ARGV[ai]), tonumber(ARGV[ai + 1])
  local k, a = {}, {}
  for i = 1, nk do k[i] = KEYS[ki + i - 1] end
  for i = 1, na do a[i] = ARGV[ai + 1 + i] end
  settle(k, a)
  ki, ai = ki + nk, ai + 2 + na
end
local K, A = {}, {}
for i = ki, #KEYS do K[#K + 1] = KEYS[i] end
for i = ai, #ARGV do A[#A + 1] = ARGV[i] end
"""
)
_READ_BODY = """
local out = {}
for i = 1, #KEYS / 2 do
  local sn, st, su, rn, rt, ru = live(KEYS[2 * i - 1], KEYS[2 * i], tonumber(ARGV[1]))
  table.insert(out, {sn, st, su, rn, rt, ru})
end
return out
"""
_READ = _LIVE + _READ_BODY
_RESERVE = _LIVE + _RESERVE_BODY


def _after_settles(body: str) -> str:
    """``body`` run after the queued settles, on what they leave of KEYS and ARGV."""
    return _LIVE + _SETTLES + body.replace("KEYS", "K").replace("ARGV", "A")


_SETTLED_READ = _after_settles(_READ_BODY)
_SETTLED_RESERVE = _after_settles(_RESERVE_BODY)
_FLUSH = _SETTLES + "return 0"


def _glob_escaped(text: str) -> str:
    """``text`` matched literally by a SCAN MATCH pattern."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


def _limit(value: int | None) -> int:
    return NO_LIMIT if value is None else value


@maps_errors("budgets")
class RedisBudgetStore:
    def __init__(
        self, gateway: GatewaySection, client: object = None, later: Later | None = None
    ) -> None:
        self._gateway = gateway
        self._prefix = gateway.redis_prefix() + "budget:"
        self._redis: Redis | None = None
        self._shared = client if isinstance(client, Redis) else None
        self._read: AsyncScript
        self._reserve: AsyncScript
        self._settled_read: AsyncScript
        self._settled_reserve: AsyncScript
        self._flush_script: AsyncScript
        self._queue = SettleQueue(self._flush, *([later] if later else []))

    def _r(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("budget store is not open")
        return self._redis

    def _pair(self, key: str) -> list[str]:
        return [self._prefix + "c:" + key, self._prefix + "r:" + key]

    async def open(self) -> None:
        redis = self._redis = self._shared or connect(
            self._gateway, max_connections=OWN_CONNECTIONS
        )
        # EVALSHA: the script's text is sent once, not with every call.
        self._read = redis.register_script(_READ)
        self._reserve = redis.register_script(_RESERVE)
        self._settled_read = redis.register_script(_SETTLED_READ)
        self._settled_reserve = redis.register_script(_SETTLED_RESERVE)
        self._flush_script = redis.register_script(_FLUSH)

    async def compact(self) -> None:
        return None  # deleted keys are gone from the server

    async def close(self) -> None:
        try:
            if self._redis is not None:
                await self._queue.drain()
        finally:
            redis, self._redis = self._redis, None
            if redis is not None and redis is not self._shared:
                await redis.aclose()

    async def _run(
        self, script: AsyncScript | None, settled: AsyncScript, keys: list[str], args: list[Any]
    ) -> Any:
        """``script``, or with settles queued ``settled`` (the same work after them): one call,
        one round trip. A server that lost its scripts gets them again (redis-py's EVALSHA
        fallback): nothing ran before."""
        queued = self._queue.take()
        if not queued:
            return await script(keys=keys, args=args) if script is not None else None
        head_keys: list[str] = []
        head_args: list[str | int] = [len(queued)]
        for item in queued:
            names = [self._prefix + "avg:" + item.agent, self._prefix + "index"]
            names += [name for key in item.keys for name in self._pair(key)]
            argv: list[str | int] = [
                item.ticket,
                item.nano,
                item.tokens,
                item.turns,
                "1" if item.averaged else "0",
            ]
            head_keys += names
            head_args += [len(names), len(argv) + len(item.keys), *argv, *item.keys]
        return await settled(keys=head_keys + keys, args=head_args + args)

    async def _flush(self) -> None:
        await self._run(None, self._flush_script, [], [])

    async def read(self, keys: Sequence[str], now: float) -> dict[str, Usage]:
        if not keys:
            return {}
        names = [name for key in keys for name in self._pair(key)]
        rows = await self._run(self._read, self._settled_read, names, [repr(now)])
        return {key: Usage(*(int(v) for v in row)) for key, row in zip(keys, rows, strict=True)}

    async def reserve(
        self, ticket: str, charges: Sequence[Charge], now: float, expires: float
    ) -> str | None:
        return (await self.reserve_reading(ticket, charges, now, expires))[0]

    async def reserve_reading(
        self, ticket: str, charges: Sequence[Charge], now: float, expires: float
    ) -> tuple[str | None, dict[str, Usage]]:
        names = [name for c in charges for name in self._pair(c.key)]
        args: list[str | int] = [
            ticket,
            repr(now),
            repr(expires),
            max(1, int((expires - now) * 1000)),
        ]
        for c in charges:
            args += [_limit(c.limit_nano), _limit(c.limit_tokens), _limit(c.limit_turns)]
            args += [c.nano, c.tokens, c.turns]
        refused, rows = await self._run(self._reserve, self._settled_reserve, names, args)
        usage = {c.key: Usage(*(int(v) for v in row)) for c, row in zip(charges, rows, strict=True)}
        return (charges[int(refused) - 1].key if refused else None), usage

    async def settle(self, ticket: str, keys: Sequence[str], spent: Spent, agent: str) -> None:
        self._queue.add(settle_of(ticket, keys, spent, agent))

    async def release(self, ticket: str, keys: Sequence[str]) -> None:
        await self._flush()
        async with self._r().pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hdel(self._prefix + "r:" + key, ticket)
            await pipe.execute()

    async def once(self, key: str, now: float, expires: float) -> bool:
        await self._flush()
        ttl_ms = max(1, int((expires - now) * 1000))
        return bool(await self._r().set(self._prefix + "f:" + key, "1", nx=True, px=ttl_ms))

    async def average(self, agent: str) -> CallAverage:
        await self._flush()
        calls, nano, tokens = await self._r().hmget(
            self._prefix + "avg:" + agent, "calls", "n", "t"
        )
        return CallAverage(int(calls or 0), int(nano or 0), int(tokens or 0))

    async def counters(self) -> dict[str, Usage]:
        await self._flush()
        r = self._r()
        keys = sorted(str(k) for k in await r.smembers(self._prefix + "index"))
        if not keys:
            return {}
        async with r.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hmget(self._prefix + "c:" + key, "n", "t", "u")
            rows = await pipe.execute()
        return {
            key: Usage(int(n or 0), int(t or 0), int(u or 0))
            for key, (n, t, u) in zip(keys, rows, strict=True)
            if n is not None or t is not None or u is not None
        }

    async def forget(self, scope: str) -> int:
        await self._flush()
        r, index = self._r(), self._prefix + "index"
        keys = [str(k) for k in await r.smembers(index) if split_key(str(k))[1] == scope]
        if keys:
            async with r.pipeline(transaction=True) as pipe:
                for key in keys:
                    pipe.delete(*self._pair(key), self._prefix + "f:" + key + WARN_SUFFIX)
                    pipe.srem(index, key)
                await pipe.execute()
        return len(keys)

    async def forget_flags(self, user: str) -> int:
        r = self._r()
        pattern = _glob_escaped(self._prefix + "f:" + refusal_flag(user, "")) + "*"
        keys = [key async for key in r.scan_iter(match=pattern, count=1000)]
        return int(await r.delete(*keys)) if keys else 0
