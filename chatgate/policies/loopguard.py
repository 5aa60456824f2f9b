"""Bot-to-bot loop protection: stop two bots from answering each other forever in one chat."""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass


@dataclass(frozen=True)
class LoopPolicy:
    """At most ``max_bot_turns`` bot-authored messages per chat within ``window_s``."""

    max_bot_turns: int = 5
    window_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_bot_turns < 1:
            raise ValueError(f"max_bot_turns must be >= 1, got {self.max_bot_turns!r}")
        if not self.window_s > 0:
            raise ValueError(f"window_s must be > 0, got {self.window_s!r}")


class BotLoopGuard:
    """Sliding-window counter of bot messages per chat; a human message clears the streak.

    Refused messages are not recorded, so a chat recovers as soon as old bot turns age out.
    Memory is bounded: at most ``max_chats`` chats (least recently active evicted), each
    holding at most ``max_bot_turns`` timestamps.
    """

    def __init__(self, policy: LoopPolicy = LoopPolicy(), *, max_chats: int = 10_000) -> None:
        if max_chats < 1:
            raise ValueError(f"max_chats must be >= 1, got {max_chats!r}")
        self._policy = policy
        self._max_chats = max_chats
        self._streaks: OrderedDict[str, deque[float]] = OrderedDict()

    @property
    def policy(self) -> LoopPolicy:
        """The policy in force."""
        return self._policy

    def tracked_chats(self) -> int:
        """Number of chats with a live bot streak."""
        return len(self._streaks)

    def check(self, *, chat_key: str, sender_is_bot: bool, now: float) -> bool:
        """True when the message may proceed; False means a bot loop (DropReason.BOT_LOOP)."""
        if not sender_is_bot:
            self._streaks.pop(chat_key, None)
            return True
        streak = self._streaks.get(chat_key)
        if streak is None:
            streak = deque(maxlen=self._policy.max_bot_turns)
        cutoff = now - self._policy.window_s
        while streak and streak[0] <= cutoff:
            streak.popleft()
        if len(streak) >= self._policy.max_bot_turns:
            self._remember(chat_key, streak)
            return False
        streak.append(now)
        self._remember(chat_key, streak)
        return True

    def _remember(self, chat_key: str, streak: deque[float]) -> None:
        if chat_key in self._streaks:
            self._streaks.move_to_end(chat_key)
            return
        if len(self._streaks) >= self._max_chats:
            self._streaks.popitem(last=False)
        self._streaks[chat_key] = streak
