"""One headless Chromium per browser-test module, and one worker per module.

pytest-xdist's `--dist loadgroup` sends a group to one worker by renaming each grouped test
(`nodeid@group`) through an attribute pytest 9 no longer reads, so groups are silently split.
For this directory the rename is done the pytest 9 way: each module's tests then run in order
on one worker, sharing one daemon and one browser instead of starting them on both workers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright

from tests.browser.support import launch

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import coerce_node_id

    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None or "@" in item.nodeid or HERE not in item.path.parents:
            continue
        name = mark.args[0] if mark.args else mark.kwargs.get("name", "default")
        item._id = coerce_node_id(f"{item.nodeid}@{name}")  # type: ignore[attr-defined]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await launch(playwright)
        try:
            yield chromium
        finally:
            await chromium.close()
