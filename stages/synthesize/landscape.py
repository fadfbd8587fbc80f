"""The continental-US landscape two generators share: a regional elevation trend and aridity.

The elevation trend is a west-east profile (coastal plains, Great Plains rising westward, Basin and
Range) plus the Rocky Mountains, Sierra Nevada/Cascades and Appalachians; aridity is dry west of
~100 W except the wet Pacific Northwest coast. `imagery` builds its relief and NDVI on them, and
`hdf`'s bucket model lapses its air temperature over the same elevation at an aridity-dependent
rate, so the mosaic and the grid describe one landscape. Here rather than in either package so
that neither generator imports the other (the imagery package loads rasterio).
"""

from __future__ import annotations

import numpy as np

PROFILE_LON = (-125, -121, -119, -114, -105, -102, -97, -94, -88, -82, -78, -75, -66)
PROFILE_M = (150, 200, 1100, 1400, 1700, 1200, 450, 300, 180, 250, 150, 40, 100)


def _bump(value: np.ndarray, centre: float | np.ndarray, width: float) -> np.ndarray:
    return np.exp(-(((value - centre) / width) ** 2))


def _step(value: np.ndarray, edge: float | np.ndarray, width: float) -> np.ndarray:
    return 1 / (1 + np.exp(-(value - edge) / width))


def regional_elevation(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Smooth elevation trend [m] of the contiguous US: a west-east profile plus mountain ranges."""
    profile = np.interp(lon, PROFILE_LON, PROFILE_M)
    rockies = 1300 * _bump(lon, -106.5 - 0.12 * (lat - 38), 1.8) * _step(lat, 33.0, 1)
    sierra_cascades = 1300 * _bump(lon, -119.2 - 0.28 * (lat - 37), 0.8) * _step(lat, 35.0, 0.8)
    appalachians = 650 * _bump(lon, -81.0 + (lat - 37), 1.5) * _step(lat, 33.5, 0.8) \
        * _step(-lat, -46.0, 0.8)
    return profile + rockies + sierra_cascades + appalachians


def aridity(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """0 (humid) to ~1 (arid): dry west of ~100 W except the wet Pacific Northwest coast."""
    pacific_nw = _bump(lon, -123.0, 1.5) * _step(lat, 41.0, 1)
    return _step(-lon, 100.0, 2.5) * (1 - 0.8 * pacific_nw)
