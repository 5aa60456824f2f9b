"""Large photos are scaled down without a full-size decode, in every JPEG colour mode, and a
truncated one is refused rather than half-read."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from chatgate.media.images import UnreadableImage, image_part


def _jpeg(path: Path, mode: str, size: tuple[int, int], color: object) -> Path:
    Image.new(mode, size, color).save(path, "JPEG", quality=90)  # type: ignore[arg-type]
    return path


def _decoded(part: dict[str, object]) -> Image.Image:
    url = str(part["image_url"]["url"])  # type: ignore[index]
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


@pytest.mark.parametrize(
    ("mode", "color", "rgb"),
    [
        ("RGB", (200, 40, 10), (200, 40, 10)),
        ("L", 90, (90, 90, 90)),
        ("CMYK", (0, 255, 255, 0), (255, 0, 0)),
    ],
)
def test_a_large_jpeg_comes_out_at_the_exact_size_and_colour(
    tmp_path: Path, mode: str, color: object, rgb: tuple[int, int, int]
) -> None:
    path = _jpeg(tmp_path / "big.jpg", mode, (4000, 3000), color)
    image = image_part(path, "image/jpeg", 1568)
    assert (image.width, image.height, image.resized) == (1568, 1176, True)
    out = _decoded(image.part)
    assert out.format == "JPEG" and out.mode == "RGB" and out.size == (1568, 1176)
    pixel = out.convert("RGB").getpixel((784, 588))
    assert isinstance(pixel, tuple)
    assert all(abs(a - b) <= 12 for a, b in zip(pixel, rgb, strict=True))


def test_a_truncated_large_jpeg_is_unreadable(tmp_path: Path) -> None:
    path = _jpeg(tmp_path / "cut.jpg", "RGB", (3000, 2000), (1, 2, 3))
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(UnreadableImage):
        image_part(path, "image/jpeg", 1000)
