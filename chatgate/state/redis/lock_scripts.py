"""The Lua scripts of the Redis turn lock: each one step on one session's lock, so a stale
token never frees, extends or passes on a later holder's lock."""

RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# A lock gone altogether (Redis lost its data, or it ran out and nobody took it) is taken again
# by the holder whose turn still runs: no later turn of the session slips in.
RENEW = """
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if not v then redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2]) return 1 end
return 0
"""
# KEYS: a lock; ARGV: a token prefix (a replica's) → 1 when a lock of that replica was freed.
RELEASE_PREFIXED = """
local v = redis.call('get', KEYS[1])
if v and string.sub(v, 1, string.len(ARGV[1])) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# KEYS: a lock, the wipe gate; ARGV: my token, px → 1 when the lock was free and is mine now.
# While the gate stands (Redis lost its data a moment ago) a free lock is not taken: the
# replicas take back the locks of what they hold first.
# ARGV[3]: the value of a lock passed on to my replica (`handoff:@<replica>`), taken as free.
TAKE = """
if redis.call('get', KEYS[1]) == ARGV[3] then
  redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2])
  return 1
end
if redis.call('exists', KEYS[2]) == 1 then return 0 end
if redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', ARGV[2]) then return 1 end
return 0
"""
# KEYS: a lock, the wipe gate, the session's open messages; ARGV: my token, px, the value a
# hand-off left, the replica liveness key prefix ('' : not from a dead replica), the value of a
# lock passed on to my replica, my turn's messages, the journal entry prefix, the earlier
# messages given up (both newline-joined). 1 when the lock is mine now: it was free (and no gate
# stands), passed on with the message I take up or to my replica, or with a later open message
# of the session than mine, or held by (or passed on to) a replica whose liveness key expired (it
# died, or stalls: only the sender of an answer it made takes that lock, never a turn that would
# ask the model again). Even then it waits for an open message of the session that came in
# before my turn's (its key is returned); one whose entry is gone or settled leaves the index.
TAKE_OVER = """
local v = redis.call('get', KEYS[1])
local ours, first, earlier = {}, nil, nil
for k in string.gmatch(ARGV[6], '[^\\n]+') do
  ours[k] = true
  local score = redis.call('zscore', KEYS[3], k)
  if score and (not first or tonumber(score) < first) then first = tonumber(score) end
end
if first then
  for k in string.gmatch(ARGV[8], '[^\\n]+') do ours[k] = true end
  for _, k in ipairs(redis.call('zrangebyscore', KEYS[3], '-inf', '(' .. first)) do
    local state = redis.call('hget', ARGV[7] .. k, 'state')
    if not state or state == 'done' or state == 'dropped' then
      redis.call('zrem', KEYS[3], k)
    elseif not ours[k] then
      earlier = k
      break
    end
  end
end
local free = (not v and redis.call('exists', KEYS[2]) == 0) or v == ARGV[3] or v == ARGV[5]
local passed = v and string.sub(v, 1, 8) == 'handoff:' and string.sub(v, 9, 9) ~= '@'
if not free and first and passed then
  local later = redis.call('zscore', KEYS[3], string.sub(v, 9))
  free = later ~= false and tonumber(later) > first
end
if not free and v and ARGV[4] ~= '' and string.sub(v, 1, 8) ~= 'handoff:' then
  local slash = string.find(v, '/', 1, true)
  free = slash ~= nil and redis.call('exists', ARGV[4] .. string.sub(v, 1, slash - 1)) == 0
elseif not free and v and ARGV[4] ~= '' and string.sub(v, 1, 9) == 'handoff:@' then
  free = redis.call('exists', ARGV[4] .. string.sub(v, 10)) == 0
end
if not free then return 0 end
if earlier then return earlier end
redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2])
return 1
"""
# KEYS: a lock, its message's journal entry; ARGV: my token, the hand-off value, px, my replica,
# the prefix of a lock passed on to a replica → the lock passed on (1) or not mine (0). A message
# another replica adopted (its owner, never handed off) takes the lock to that replica, whose
# turns of the session (the adopted ones first) take it, whichever message leads its batch.
PASS_ON = """
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
local h = redis.call('hmget', KEYS[2], 'owner', 'handed_at', 'state')
local value = ARGV[2]
if h[1] and h[1] ~= '' and h[1] ~= ARGV[4] and not h[2] and h[3] ~= 'done' then
  value = ARGV[5] .. h[1]
end
redis.call('set', KEYS[1], value, 'px', ARGV[3])
return 1
"""
# KEYS: a lock; ARGV: my token ('' : none), the hand-off value, px → 1 when the lock, mine or
# free, now waits for that message's turn; 0 when another holder has it (tried again until the
# message's own turn takes the lock or the TTL runs out).
STRAND = """
local v = redis.call('get', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('set', KEYS[1], ARGV[2], 'px', ARGV[3])
return 1
"""
# KEYS: a lock passed on to a message cut short here, that message's journal entry; ARGV: the
# hand-off value, this replica, px → 1 when extended: the lock still waits for the message, and
# the entry is still this replica's and open (its resume here takes the lock).
KEEP_PASSED = """
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
local h = redis.call('hmget', KEYS[2], 'owner', 'state')
if h[1] ~= ARGV[2] or h[2] == 'done' then return 0 end
return redis.call('pexpire', KEYS[1], ARGV[3])
"""
