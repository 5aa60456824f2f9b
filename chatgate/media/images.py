"""Images as vision content parts: downscaled with Pillow to the model's useful size, sent as
bytes (a platform URL may carry a token), passed through unchanged when already small enough."""

from __future__ import annotations

import base64
import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

# Pillow's decompression-bomb guard: an image claiming more pixels than this is refused.
MAX_PIXELS = 50_000_000
Image.MAX_IMAGE_PIXELS = MAX_PIXELS


class UnreadableImage(Exception):
    """Not an image Pillow can open, or a decompression bomb."""


@dataclass(frozen=True, slots=True)
class ImagePart:
    part: dict[str, Any]  # litellm/OpenAI ``image_url`` content part (a data URL)
    width: int
    height: int
    resized: bool


def image_part(path: Path, mime: str, max_side: int) -> ImagePart:
    """Blocking (run in a thread)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                width, height = img.size
                if max(width, height) <= max_side:
                    img.load()  # a truncated or corrupt file fails here
                    data = path.read_bytes()  # no re-encode
                    return ImagePart(_part(mime, data), width, height, False)
                scale = max_side / max(width, height)
                size = (max(1, round(width * scale)), max(1, round(height * scale)))
                # JPEG decodes at 1/2..1/8 scale straight from the DCT, still no smaller than
                # `size`: a 12 MP photo never sits in memory at full size (36 MB per decode)
                img.draft("RGB", size)
                rgb = img if img.mode == "RGB" else img.convert("RGB")
                small = rgb.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    except (
        OSError,
        ValueError,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
    ) as exc:
        raise UnreadableImage(type(exc).__name__) from None
    out = io.BytesIO()
    small.save(out, "JPEG", quality=85)
    return ImagePart(_part("image/jpeg", out.getvalue()), size[0], size[1], True)


def _part(mime: str, data: bytes) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}
