"""Name labels for the points of a scatter plot that collide with nothing and point at their point.

Each label tries places around its point in a fixed order and takes the first that costs nothing;
failing that, the cheapest. A place costs, from worst to least: `OVERLAP` for every label or marker
it covers, its distance outside the axes, `COLLISION` for every way it could be misread (a label
next to a point but nearer another point, a leader line through a label or another point's
marker), `CROSSING` for every leader line it crosses, and its overlap (display px²) with whiskers.
A point with a neighbour within `CROWDED` px is labelled further out, with a leader line.
Everything is measured in display coordinates, so call `label_points` after the axes' limits and
the figure's layout are final.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from matplotlib.axes import Axes
from matplotlib.transforms import Bbox

NEAR = [(6, 4), (6, -7), (-6, 4), (-6, -7), (0, 9), (0, -10)]  # points from the point
DIRECTIONS = [(1, 0.5), (1, -0.5), (-1, 0.5), (-1, -0.5), (0, 1), (0, -1), (1, 0), (-1, 0),
              (1, 1), (1, -1), (-1, 1), (-1, -1), (0.5, 1), (0.5, -1), (-0.5, 1), (-0.5, -1)]
RADII = (24, 40, 60, 84)
CROWDED = 30
OVERLAP = 100_000  # a label over another label or a marker: unreadable
COLLISION = 5000  # a leader through a label or marker, or a near label nearer another point: misread
CROSSING = 2000  # two leaders crossing: harder to follow
MARKER = 6  # half the side of the box kept free around a marker, display px
PASSES = 2  # after the first placement, each label is placed again knowing all the others
LEADER = {"arrowstyle": "-", "color": "#999999", "lw": 0.6, "shrinkA": 1, "shrinkB": 4}


def _overlap(box: Bbox, others: Sequence[Bbox]) -> float:
    """Summed overlap area of `box` with `others`."""
    return sum(max(min(box.x1, o.x1) - max(box.x0, o.x0), 0.0) * max(min(box.y1, o.y1) - max(box.y0, o.y0), 0.0)
               for o in others)


def _nearest(box: Bbox, point: np.ndarray) -> np.ndarray:
    """The point of `box` nearest `point`."""
    return np.array([min(max(point[0], box.x0), box.x1), min(max(point[1], box.y0), box.y1)])


def _crosses(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    """Whether segments ab and cd properly intersect."""
    def side(p, q, r):
        return np.sign((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def _through(a: np.ndarray, b: np.ndarray, box: Bbox) -> bool:
    """Whether the leader from a label at `a` to its point `b` passes through `box`.

    Sampled at 24 points, leaving out the last `2 * MARKER` px: next to its point a leader may
    touch the markers of points that close.
    """
    length = float(np.hypot(*(b - a)))
    end = max(0.0, 1.0 - 2 * MARKER / length) if length else 0.0
    if end <= 0.02:
        return False
    samples = a + np.linspace(0.02, end, 24)[:, None] * (b - a)
    return bool(np.any((samples[:, 0] >= box.x0) & (samples[:, 0] <= box.x1)
                       & (samples[:, 1] >= box.y0) & (samples[:, 1] <= box.y1)))


def _far_places(own: np.ndarray, neighbours: list[np.ndarray]) -> list[tuple[int, int]]:
    """Offsets on rings and in columns left and right of a point; nearer first, then facing away from the neighbours."""
    away = own - np.mean(neighbours, axis=0) if neighbours else np.zeros(2)
    rings = {(round(r * dx), round(r * dy)) for r in RADII for dx, dy in DIRECTIONS}
    columns = {(side * r, step) for side in (1, -1) for r in (30, 60) for step in range(-48, 49, 12)}
    return sorted(rings | columns, key=lambda o: (round(float(np.hypot(*o)) / 12),
                                                  -float(np.dot(o, away)) / float(np.hypot(*o)), o))


def _alignment(offset: tuple[int, int]) -> tuple[str, str]:
    """Horizontal and vertical alignment of a label placed at `offset` from its point."""
    dx, dy = offset
    return ("left" if dx > 0 else "right" if dx < 0 else "center",
            "bottom" if dy > 0 else "top" if dy < -6 else "center")


@dataclass
class _Scene:
    """The axes in display px: points, their markers, whiskers and the labels placed so far."""

    pixels: dict[tuple[float, float], np.ndarray]
    frame: Bbox
    whiskers: list[Bbox]
    px_per_point: float
    labels: dict[tuple[float, float], tuple[Bbox, tuple[np.ndarray, np.ndarray] | None, tuple[int, int]]] = \
        field(default_factory=dict)

    def __post_init__(self) -> None:
        self.markers = {xy: Bbox.from_extents(*(p - MARKER), *(p + MARKER)) for xy, p in self.pixels.items()}

    def box(self, xy: tuple[float, float], offset: tuple[int, int], size: tuple[float, float]) -> Bbox:
        """Where a label of `size` (px) placed at `offset` (points) from point `xy` lies."""
        (ha, va), (width, height) = _alignment(offset), size
        x, y = self.pixels[xy] + np.array(offset) * self.px_per_point
        x0 = x if ha == "left" else x - width if ha == "right" else x - width / 2
        y0 = y if va == "bottom" else y - height if va == "top" else y - height / 2
        return Bbox.from_extents(x0, y0, x0 + width, y0 + height).padded(3)

    def cost(self, xy: tuple[float, float], box: Bbox, far: bool) -> float:
        """What placing a label of point `xy` at `box` costs (see the module docstring)."""
        own = self.pixels[xy]
        others = [p for k, p in self.pixels.items() if k != xy]
        markers = [m for k, m in self.markers.items() if k != xy]  # the near places clear its own marker
        placed = [entry for k, entry in self.labels.items() if k != xy]
        boxes = [entry[0] for entry in placed]
        leaders = [entry[1] for entry in placed if entry[1] is not None]
        outside = max(self.frame.x0 - box.x0, 0) + max(box.x1 - self.frame.x1, 0) + \
            max(self.frame.y0 - box.y0, 0) + max(box.y1 - self.frame.y1, 0)
        cost = OVERLAP * sum(_overlap(box, [other]) > 0 for other in boxes + markers) + 10 * OVERLAP * outside \
            + _overlap(box, self.whiskers) + COLLISION * sum(_through(a, b, box) for a, b in leaders)
        start = _nearest(box, own)
        if not far:
            return cost + COLLISION * any(np.hypot(*(_nearest(box, p) - p)) < np.hypot(*(start - own)) for p in others)
        return cost + CROSSING * sum(_crosses(start, own, a, b) for a, b in leaders) \
            + COLLISION * sum(_through(start, own, other) for other in boxes + markers)

    def place(self, xy: tuple[float, float], size: tuple[float, float]) -> None:
        """Put the label of point `xy` at its cheapest place (the first free one)."""
        own = self.pixels[xy]
        others = [p for k, p in self.pixels.items() if k != xy]
        crowded = [p for p in others if np.hypot(*(own - p)) < CROWDED]
        best = None
        for offset in _far_places(own, crowded) if crowded else NEAR + _far_places(own, others):
            far = offset not in NEAR
            box = self.box(xy, offset, size)
            cost = self.cost(xy, box, far)
            if best is None or cost < best[0]:
                best = (cost, box, (_nearest(box, own), own) if far else None, offset)
            if cost == 0:
                break
        self.labels[xy] = best[1:]


def label_points(ax: Axes, points: list[tuple[float, float, str]],
                 whiskers: Sequence[tuple[float, float, float]] = (), fontsize: float = 9) -> None:
    """Label each point; points at the same position share one label (names joined by commas).

    Args:
        ax: The axes, with final limits and layout.
        points: (x, y, name) in data coordinates.
        whiskers: Vertical error bars (x, low, high) to keep clear of.
        fontsize: Label size in points.
    """
    merged: dict[tuple[float, float], list[str]] = {}
    for x, y, name in points:
        merged.setdefault((round(x, 9), round(y, 9)), []).append(name)
    renderer = ax.figure.canvas.get_renderer()
    whisker_boxes = []
    for x, low, high in whiskers:
        (px, y0), (_, y1) = ax.transData.transform([(x, low), (x, high)])
        whisker_boxes.append(Bbox.from_extents(px - 3, min(y0, y1), px + 3, max(y0, y1)))
    scene = _Scene({xy: ax.transData.transform(xy) for xy in merged}, ax.get_window_extent(renderer),
                   whisker_boxes, ax.figure.dpi / 72)
    sizes = {}
    for xy, names in merged.items():
        probe = ax.text(0, 0, ", ".join(names), fontsize=fontsize)
        extent = probe.get_window_extent(renderer)
        sizes[xy] = (extent.width, extent.height)
        probe.remove()
    for _ in range(1 + PASSES):
        for xy in sorted(merged):
            scene.place(xy, sizes[xy])
    for xy, (_, leader, offset) in scene.labels.items():
        ha, va = _alignment(offset)
        ax.annotate(", ".join(merged[xy]), xy, xytext=offset, textcoords="offset points", fontsize=fontsize,
                    ha=ha, va=va, arrowprops=LEADER if leader is not None else None)
