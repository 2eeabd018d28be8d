"""What both reports render with: the Jinja2 environment of the package's templates, number formatting (one
formatter, number(), for every number on a page),
and figures embedded as PNG data URIs. A leaf: the main report (sdpa_lab.report.html) and the
calibration report (sdpa_lab.calibration.report) import it, and it imports neither.
"""

from __future__ import annotations

import base64

from jinja2 import Environment, PackageLoader, StrictUndefined

from sdpa_lab.numbers import at_unit, margin, num, number  # noqa: F401  (the report's one formatter, re-exported)
from sdpa_lab.report.specs import DPI


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels, from a PNG's IHDR chunk."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def css_size(png: bytes) -> tuple[int, int]:
    """The size at which a figure shows its fonts at their point sizes (96 CSS px per inch)."""
    w, h = png_size(png)
    return round(w * 96 / DPI), round(h * 96 / DPI)


def data_uri(png: bytes) -> str:
    """A PNG as a data: URI, for an <img> that needs no other file."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def environment() -> Environment:
    """The Jinja2 environment of the report's templates (shipped in the package), autoescaping everything."""
    env = Environment(loader=PackageLoader("sdpa_lab.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["num"] = num
    env.filters["number"] = number
    return env
