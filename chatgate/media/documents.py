"""Documents as text: text-like files decoded, PDFs through pypdf, cut at a character budget."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class UnreadableDocument(Exception):
    """A PDF pypdf cannot parse."""


@dataclass(frozen=True, slots=True)
class DocumentText:
    text: str
    truncated: bool


def text_file(path: Path, max_chars: int) -> DocumentText:
    """Blocking (run in a thread); reads at most ~4 bytes per allowed character."""
    with path.open("rb") as fh:
        raw = fh.read(max_chars * 4 + 4)
    text = raw.decode("utf-8", errors="replace")
    return _cut(text, max_chars)


def pdf_text(path: Path, max_chars: int) -> DocumentText:
    """Blocking (run in a thread); stops reading pages once the budget is spent."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    parts: list[str] = []
    length = 0
    try:
        reader = PdfReader(str(path))
        for page in reader.pages:
            chunk = page.extract_text() or ""
            parts.append(chunk)
            length += len(chunk)
            if length > max_chars:
                break
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise UnreadableDocument(type(exc).__name__) from None
    return _cut("\n".join(parts).strip(), max_chars)


def _cut(text: str, max_chars: int) -> DocumentText:
    if len(text) <= max_chars:
        return DocumentText(text, False)
    return DocumentText(text[:max_chars], True)
