"""Teams conversation ids as chatgate chat ids, and back.

A Teams conversation id holds colons (`a:1…`, `19:…@thread.tacv2`), which a target string
(`teams:<chat>[:<thread>]`) cannot; the chat id is the conversation id with `%` and `:`
percent-encoded. A reply in a channel thread names its conversation
`<channel>;messageid=<root id>`: the chat is the channel, the thread the root message.
"""

from __future__ import annotations

THREAD_MARK = ";messageid="


def chat_id(conversation: str) -> str:
    return conversation.replace("%", "%25").replace(":", "%3A")


def conversation_id(chat: str) -> str:
    return chat.replace("%3A", ":").replace("%3a", ":").replace("%25", "%")


def split_thread(conversation: str) -> tuple[str, str | None]:
    """(the channel's conversation id, the thread's root message id or None)."""
    base, mark, root = conversation.partition(THREAD_MARK)
    return (base, root or None) if mark else (conversation, None)


def thread_conversation(chat: str, thread: str | None) -> str:
    """The conversation id a reply into ``thread`` of ``chat`` is posted to."""
    base = conversation_id(chat)
    return f"{base}{THREAD_MARK}{thread}" if thread else base


def message_key(chat: str, activity_id: str) -> str:
    """A message id unique across conversations (activity ids repeat between chats)."""
    return f"{chat}/{activity_id}"


def reference_key(chat: str) -> str:
    """The ChannelFacts key of a chat's conversation reference."""
    return f"ref:{chat}"


def card_key(chat: str, activity_id: str) -> str:
    """The ChannelFacts key marking one of the bot's activities as an Adaptive Card."""
    return f"card:{message_key(chat, activity_id)}"
