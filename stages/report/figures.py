"""Matplotlib set up for byte-identical plots, saved as PNG and SVG, and labels that do not overlap.

Determinism: the Agg canvas, the font matplotlib ships (DejaVu Sans, so every machine draws the same
glyphs), text drawn as paths in SVG, a fixed `svg.hashsalt` for SVG element ids, and no date or
software version in the files' metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402  (after selecting the backend)
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

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
PNG_METADATA = {"Software": None}
SVG_METADATA = {"Date": None, "Creator": None}
# Where a point's label may go, in points from the point, tried in this order.
OFFSETS = [(6, 5), (6, -12), (-6, 5), (-6, -12), (0, 10), (0, -16), (12, 0), (-12, 0),
           (14, 14), (14, -20), (-14, 14), (-14, -20)]


@dataclass(frozen=True)
class Plot:
    """One saved figure: file names relative to the report, title and how to read it."""

    name: str
    title: str
    caption: str

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


def save(fig: Figure, plots_dir: Path, name: str) -> None:
    """Write `<name>.png` and `<name>.svg` into `plots_dir` (call inside the `figure` context)."""
    plots_dir.mkdir(parents=True, exist_ok=True)
    fig.savefig(plots_dir / f"{name}.png", dpi=DPI, bbox_inches="tight", pad_inches=0.15,
                metadata=PNG_METADATA)
    fig.savefig(plots_dir / f"{name}.svg", bbox_inches="tight", pad_inches=0.15, metadata=SVG_METADATA)


def _overlap(box: Bbox, others: list[Bbox]) -> float:
    """Summed overlap area of `box` with `others` (display units)."""
    total = 0.0
    for other in others:
        width = min(box.x1, other.x1) - max(box.x0, other.x0)
        height = min(box.y1, other.y1) - max(box.y0, other.y0)
        total += max(width, 0.0) * max(height, 0.0)
    return total


def label_points(ax: Axes, points: list[tuple[float, float, str]], fontsize: float = 9) -> None:
    """Label each point where its label overlaps no other label, marker or the axes' edge.

    Points at the same position share one label (names joined by commas). Each label takes the
    first free place of `OFFSETS`; when none is free, the place with the least overlap. Call after
    the axes' limits and the figure's layout are final: the check is in display coordinates.
    """
    merged: dict[tuple[float, float], list[str]] = {}
    for x, y, text in points:
        merged.setdefault((round(x, 9), round(y, 9)), []).append(text)
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    taken = []
    for x, y in merged:
        px, py = ax.transData.transform((x, y))
        taken.append(Bbox.from_extents(px - 4, py - 4, px + 4, py + 4))
    for (x, y), names in sorted(merged.items()):
        best = None
        for dx, dy in OFFSETS:
            label = ax.annotate(", ".join(names), (x, y), xytext=(dx, dy), textcoords="offset points",
                                ha="left" if dx > 0 else "right" if dx < 0 else "center", va="bottom",
                                fontsize=fontsize)
            box = label.get_window_extent(renderer).padded(2)
            outside = max(frame.x0 - box.x0, 0) + max(box.x1 - frame.x1, 0) + \
                max(frame.y0 - box.y0, 0) + max(box.y1 - frame.y1, 0)
            cost = _overlap(box, taken) + 1000 * outside
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, label, box)
            else:
                label.remove()
            if cost == 0:
                break
        taken.append(best[2])
