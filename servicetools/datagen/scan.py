"""The scanned look: render the text PDF, then tilt, blur, shift contrast and add noise.

PNG scans get the "background cleanup" real scanners do (near-white pixels set
to white) so the files stay small; JPEG scans keep their grain, as phone photos
and office scanners saving JPEG do.
"""

from __future__ import annotations

import io
import random
import time
from dataclasses import asdict, dataclass

import numpy as np
import pypdfium2 as pdfium
from PIL import Image, ImageEnhance, ImageFilter

# Pillow writes a creation date into PDFs; a fixed one keeps scan-pdf output reproducible.
_PDF_DATE = time.gmtime(1767225600)
# Off-white paper, as a factor per RGB channel.
_PAPER = np.array((0.97, 0.955, 0.91), dtype=np.float32)


@dataclass(frozen=True)
class ScanLook:
    """How one document was "scanned"; written into its truth file."""

    dpi: int
    mode: str  # "L" or "RGB"
    rotation: float  # degrees, counter-clockwise
    blur: float  # Gaussian radius in pixels
    contrast: float
    noise: float  # standard deviation of pixel noise
    quality: int | None  # JPEG quality, None for PNG

    def as_truth(self, pages: list[Image.Image]) -> dict[str, object]:
        info: dict[str, object] = asdict(self)
        info["size"] = list(pages[0].size)
        return info


def pick_scan_look(rng: random.Random, fmt: str) -> ScanLook:
    return ScanLook(
        dpi=150 if fmt == "png" else rng.choice((150, 150, 175, 200)),
        mode="L" if fmt != "jpeg" else rng.choice(("L", "RGB")),
        rotation=round(rng.uniform(-1.5, 1.5), 2),
        blur=round(rng.uniform(0.2, 0.9), 2),
        contrast=round(rng.uniform(0.75, 1.15), 2),
        noise=round(rng.uniform(2.0, 9.0), 1),
        quality=None if fmt == "png" else rng.randint(70, 90),
    )


def render(pdf: bytes, dpi: int) -> list[Image.Image]:
    """Every page of ``pdf`` as an RGB image at ``dpi``."""
    document = pdfium.PdfDocument(pdf)
    try:
        return [page.render(scale=dpi / 72).to_pil().convert("RGB") for page in document]
    finally:
        document.close()


def degrade(
    image: Image.Image, look: ScanLook, seed: int, *, clean_background: bool
) -> Image.Image:
    """Make a clean render look scanned, deterministically for a given ``seed``."""
    noise_rng = np.random.default_rng(seed)
    image = image.rotate(
        look.rotation, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=(255, 255, 255)
    )
    image = image.filter(ImageFilter.GaussianBlur(look.blur))
    image = ImageEnhance.Contrast(image).enhance(look.contrast)
    image = image.convert(look.mode)
    pixels = np.asarray(image, dtype=np.float32)
    if not clean_background:
        tint = _PAPER if pixels.ndim == 3 else _PAPER.mean()
        pixels = pixels * tint
    noise = noise_rng.normal(0.0, look.noise, pixels.shape[:2]).astype(np.float32)
    pixels = pixels + (noise[..., None] if pixels.ndim == 3 else noise)
    if clean_background:
        pixels[pixels > 225] = 255
        # A few dust specks, which a background cleanup leaves in.
        pixels[noise_rng.random(pixels.shape[:2]) < 0.0003] = 110
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def encode(pages: list[Image.Image], fmt: str, look: ScanLook) -> bytes:
    """The scan as PNG, JPEG (one page only) or a PDF holding only the page images."""
    out = io.BytesIO()
    if fmt == "png":
        if len(pages) != 1:
            raise ValueError("a PNG holds one page")
        pages[0].save(out, "PNG", optimize=True, dpi=(look.dpi, look.dpi))
    elif fmt == "jpeg":
        if len(pages) != 1:
            raise ValueError("a JPEG holds one page")
        pages[0].save(out, "JPEG", quality=look.quality, optimize=True, dpi=(look.dpi, look.dpi))
    elif fmt == "scan-pdf":
        pages[0].save(
            out,
            "PDF",
            save_all=True,
            append_images=pages[1:],
            resolution=float(look.dpi),
            quality=look.quality,
            creationDate=_PDF_DATE,
            modDate=_PDF_DATE,
        )
    else:
        raise ValueError(f"not a scan format: {fmt}")
    return out.getvalue()


def scan(pdf: bytes, fmt: str, rng: random.Random) -> tuple[bytes, dict[str, object]]:
    """Turn a text PDF into a scanned document of format ``fmt``; return bytes and scan info."""
    look = pick_scan_look(rng, fmt)
    seed = rng.getrandbits(63)
    pages = [
        degrade(page, look, seed + i, clean_background=fmt == "png")
        for i, page in enumerate(render(pdf, look.dpi))
    ]
    return encode(pages, fmt, look), look.as_truth(pages)
