"""Telegram through the real python-telegram-bot against the fake Bot API."""

from __future__ import annotations

from pathlib import Path

from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running


async def test_dm_from_allowed_user_is_answered(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path, fake_tg, fake_llm, channel="    dm_policy: allowlist\n    allowed_users: [42]"
    )
    async with running(config):
        fake_tg.dm(42, "hello bot")
        [call] = await fake_tg.wait_for("sendMessage", timeout=15)
    assert call.params["chat_id"] == 42
    assert call.params["text"] == "echo: hello bot"
    assert call.params["parse_mode"] == "HTML"
    assert fake_llm.requests[0].last_user_text == "hello bot"


async def test_a_10000_char_answer_arrives_in_chunks_within_limits_with_intact_code(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    import html
    from html.parser import HTMLParser

    from chatgate.presentation.chunking import utf16_len

    code = "\n".join(f"    print('line {i} 🚀 a<b')" for i in range(150))
    prose = " ".join(f"Sentence {i} with some words 😀." for i in range(180))
    answer = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(answer) >= 10_000
    fake_llm.script(answer)

    class Visible(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.text, self.depth, self.in_pre = "", 0, ""

        def handle_starttag(self, tag: str, attrs: object) -> None:
            self.depth += tag == "pre"

        def handle_endtag(self, tag: str) -> None:
            self.depth -= tag == "pre"

        def handle_data(self, data: str) -> None:
            self.text += data
            if self.depth:
                self.in_pre += data

    config = telegram_config(tmp_path, fake_tg, fake_llm, channel="    dm_policy: open")
    async with running(config) as gw:
        fake_tg.dm(42, "write the long one")
        await fake_tg.wait_for("sendMessage", count=3, timeout=20)
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
    sent = [c.params["text"] for c in fake_tg.calls_of("sendMessage")]
    code_seen = ""
    for text in sent:
        parser = Visible()
        parser.feed(text)
        parser.close()
        assert utf16_len(parser.text) <= 4096
        assert parser.depth == 0  # every chunk closes its <pre>
        code_seen += parser.in_pre
    assert len(sent) >= 3
    for i in range(150):
        assert f"print('line {i} 🚀 a<b')" in html.unescape(code_seen)
