"""Matplotlib set up for byte-identical plots, saved as PNG and SVG.

Determinism: the Agg canvas, the font matplotlib ships (DejaVu Sans, so every machine draws the same
glyphs), text drawn as paths in SVG, a fixed `svg.hashsalt` for SVG element ids, and no date or
software version in the files' metadata.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402  (after selecting the backend)
from matplotlib.figure import Figure  # noqa: E402

STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "svg.fonttype": "path",
    "svg.hashsalt": "scibench-report",
    "path.simplify": False,
}
DPI = 150
CSS_PER_PX = 100 / DPI  # an inch of figure is 100 CSS px on the page (sharp on 1.5x screens)
PNG_METADATA = {"Software": None}
SVG_METADATA = {"Date": None, "Creator": None}


@dataclass(frozen=True)
class Plot:
    """One saved figure: file names relative to the report, title and how to read it."""

    name: str
    title: str
    caption: str
    size: tuple[int, int]  # CSS px on the page: the PNG's pixels at `CSS_PER_PX`

    @property
    def png(self) -> str:
        """The PNG's path relative to index.html."""
        return f"plots/{self.name}.png"

    @property
    def svg(self) -> str:
        """The SVG's path relative to index.html."""
        return f"plots/{self.name}.svg"


@contextmanager
def figure(width: float, height: float) -> Iterator[Figure]:
    """A figure (inches) drawn with the report's style, on an Agg canvas."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(width, height))
        FigureCanvasAgg(fig)
        yield fig


def save(fig: Figure, plots_dir: Path, name: str) -> tuple[int, int]:
    """Write `<name>.png` and `<name>.svg` into `plots_dir` (call inside the `figure` context).

    Returns:
        The size to show it at on the page, in CSS px.
    """
    plots_dir.mkdir(parents=True, exist_ok=True)
    png = plots_dir / f"{name}.png"
    fig.savefig(png, dpi=DPI, bbox_inches="tight", pad_inches=0.15, metadata=PNG_METADATA)
    fig.savefig(plots_dir / f"{name}.svg", bbox_inches="tight", pad_inches=0.15, metadata=SVG_METADATA)
    width, height = struct.unpack(">II", png.read_bytes()[16:24])  # the IHDR chunk
    return round(width * CSS_PER_PX), round(height * CSS_PER_PX)
