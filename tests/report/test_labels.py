"""Point labels: none overlaps another or leaves the axes, crowded points get leader lines."""

from __future__ import annotations

import itertools

from matplotlib.text import Text

from stages.report.figures import figure
from stages.report.labels import label_points

# A coverage-quality scatter as the validity suite draws it: the reference agents stacked a few
# pixels apart at full coverage, two floors at the same point, the oracle alone.
POINTS = [(100.0, 100.0, "oracle"), (100.0, 18.0, "linear_forcing"), (100.0, 15.0, "climatology"),
          (100.0, 12.0, "interpolate"), (100.0, 11.0, "mean_flow_split"), (100.0, 10.0, "region_partition"),
          (100.0, 0.0, "fabricate"), (40.0, 0.0, "nodata"), (40.0, 0.0, "defensive")]


def labelled(points):
    with figure(6.5, 5.0) as fig:
        ax = fig.add_subplot()
        fig.subplots_adjust(left=0.13, right=0.88, bottom=0.12, top=0.9)
        ax.scatter([p[0] for p in points], [p[1] for p in points])
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        label_points(ax, points)
        fig.canvas.draw()  # places the annotations
        renderer = fig.canvas.get_renderer()
        labels = {a.get_text(): (Text.get_window_extent(a, renderer), a.arrow_patch is not None) for a in ax.texts}
        return labels, ax.get_window_extent(renderer)


def test_labels_do_not_overlap_and_stay_inside_the_axes():
    labels, frame = labelled(POINTS)
    assert sorted(labels) == ["climatology", "fabricate", "interpolate", "linear_forcing", "mean_flow_split",
                              "nodata, defensive", "oracle", "region_partition"]
    for (a, (box_a, _)), (b, (box_b, _)) in itertools.combinations(labels.items(), 2):
        assert not box_a.overlaps(box_b), (a, b)
    for name, (box, _) in labels.items():
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, name


def test_crowded_points_get_leader_lines_and_a_lone_point_a_label_beside_it():
    labels, _ = labelled(POINTS)
    assert {name for name, (_, leader) in labels.items() if leader} == {
        "linear_forcing", "climatology", "interpolate", "mean_flow_split", "region_partition"}
    assert not labels["oracle"][1] and not labels["nodata, defensive"][1]
