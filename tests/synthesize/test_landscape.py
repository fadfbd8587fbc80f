"""The shared continental-US landscape: mountains where the map has them, dry west, wet east and coast."""

from __future__ import annotations

import numpy as np

from stages.synthesize.landscape import aridity, regional_elevation


def at(field, lon: float, lat: float) -> float:
    return float(field(np.array(lon), np.array(lat)))


def test_the_ranges_stand_above_the_plains_and_the_coasts():
    rockies, sierra = at(regional_elevation, -106.5, 39.0), at(regional_elevation, -119.5, 37.5)
    plains, gulf_coast = at(regional_elevation, -100.0, 40.0), at(regional_elevation, -81.5, 28.0)
    assert rockies > 2500 and sierra > 2000
    assert gulf_coast < 300 < plains < 1000


def test_the_west_is_arid_the_east_humid_and_the_pacific_northwest_coast_wet():
    assert at(aridity, -116.5, 39.5) > 0.99  # Great Basin
    assert at(aridity, -84.4, 33.7) < 0.01  # Piedmont
    assert at(aridity, -100.0, 40.0) == 0.5  # the 100th meridian is the midpoint
    assert at(aridity, -123.5, 47.5) < 0.3  # Olympic coast, west of the dry interior
