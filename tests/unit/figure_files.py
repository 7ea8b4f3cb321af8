"""What the figure tests check in the files a plotter writes."""

from __future__ import annotations

from pathlib import Path

from PIL import Image


def png_dpi(path: Path) -> float:
    """The resolution a PNG declares (its pHYs chunk), in dots per inch."""
    with Image.open(path) as image:
        assert image.format == "PNG"
        dpi = image.info["dpi"]
    return float(dpi[0])
