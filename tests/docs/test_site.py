"""The manual builds as a site with --strict, and every internal link in it (and in README.md) leads
to a page that exists and an anchor on that page."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from tests.docs.manual import DOCS, ROOT

SKIPPED_SCHEMES = ("http", "https", "mailto")


class _Page(HTMLParser):
    """The ids a page defines and the links it makes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    out = tmp_path_factory.mktemp("site")
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(out), strict=True)
    build(config)  # strict: a broken link, a missing anchor or a page left out of nav aborts
    return out


def _internal(href: str) -> bool:
    parts = urlsplit(href)
    return not parts.scheme and not parts.netloc and not href.startswith("//")


def broken_links(site: Path) -> list[str]:
    """`page → href` for every internal link whose target page or anchor is missing."""
    parsed = {p: _parse(p) for p in site.rglob("*.html")}
    broken = []
    for page, info in parsed.items():
        if page.relative_to(site).parts[0] in {"assets", "search", "404.html"}:
            continue  # the theme's own files; 404.html links from the site root
        for href in info.links:
            if not _internal(href):
                continue
            parts = urlsplit(href)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            missing = not target.exists() or (
                bool(parts.fragment)
                and target in parsed
                and unquote(parts.fragment) not in parsed[target].ids
            )
            if missing:
                broken.append(f"{page.relative_to(site)} → {href}")
    return broken


def test_every_internal_link_and_anchor_of_the_site_resolves(site: Path) -> None:
    assert (site / "index.html").exists()
    assert broken_links(site) == []


def test_the_checker_finds_a_broken_page_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text('<h1 id="top">A</h1><a href="#top">ok</a>')
    (tmp_path / "index.html").write_text(
        '<a href="a/#top">ok</a><a href="a/#nope">bad anchor</a><a href="b/">bad page</a>'
        '<a href="https://example.org/x">outside</a>'
    )
    assert broken_links(tmp_path) == ["index.html → a/#nope", "index.html → b/"]


def _markdown_links(text: str) -> list[str]:
    without_code = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"\]\(([^)\s]+)\)", without_code)


def _anchors(markdown: str) -> set[str]:
    """The ids MkDocs' toc extension gives the headings of a page."""
    from markdown.extensions.toc import slugify

    headings = re.findall(
        r"^#{1,6} (.+?)\s*$", re.sub(r"```.*?```", "", markdown, flags=re.S), re.M
    )
    return {slugify(re.sub(r"[`*]", "", h), "-") for h in headings}


def test_every_link_in_the_readme_leads_into_the_repository() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    broken = []
    for href in _markdown_links(readme):
        if not _internal(href):
            continue
        path, _, fragment = href.partition("#")
        target = (ROOT / path) if path else ROOT / "README.md"
        missing = not target.exists() or (
            bool(fragment) and fragment not in _anchors(target.read_text(encoding="utf-8"))
        )
        if missing:
            broken.append(href)
    assert broken == []


def test_the_readme_is_short_and_every_page_is_in_the_nav() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)

    def listed(entries: object) -> set[str]:
        if isinstance(entries, str):
            return {entries}
        if isinstance(entries, list):
            return set().union(*(listed(e) for e in entries))
        if isinstance(entries, dict):
            return set().union(*(listed(v) for v in entries.values()))
        return set()

    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages - listed(config["nav"]) == set()
