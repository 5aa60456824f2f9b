"""A person with several addresses (`identities:`) is one privacy request: asking for any of
them covers all of them; another person is untouched."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm import FakeLLM
from tests.harness import fake_agent, memory, running, write_config
from tests.people.test_erase_canaries import api, files_with


async def test_erasing_one_address_erases_the_principal(tmp_path: Path, fake_llm: FakeLLM) -> None:
    config = write_config(
        tmp_path,
        f"""{fake_agent(fake_llm, "sk-test", 30)}
identities:
  ann: ["memory:ann", "memory:ann-phone"]
channels:
  memory: {{dm_policy: open}}
""",
    )
    async with running(config) as gw:
        for sender, text in (("ann", "CANARYid1"), ("ann-phone", "CANARYid2"), ("bob", "KEEPid3")):
            sub = await memory(gw).inject(text, sender_id=sender, chat_id=f"{sender}-dm")
            await sub.result
        shown = await api(gw, "GET", "/api/people/show?person=memory:ann-phone")
        assert shown["footprint"]["also"] == ["memory:ann"]
        assert shown["stores"]["journal"]["count"] == 2
        await api(gw, "POST", "/api/people/erase", {"person": "memory:ann"})
        assert files_with(gw.rt.state_dir, b"CANARYid") == []
        assert files_with(gw.rt.state_dir, b"KEEPid3") != []
