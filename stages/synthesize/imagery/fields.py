"""Physical fields behind the synthetic mosaic: relief over CONUS, seasonal NDVI, clouds, land.

Relief = the regional elevation trend in lon/lat (`stages.synthesize.landscape`, which the hdf
grid shares) plus a fractal surface whose power spectrum falls as k^-3 (Brownian terrain), built
as a sum of plane waves in projected metres, so neighbouring tiles agree along their edges; its
amplitude grows with the regional elevation. The waves are drawn once in physical units, and a grid
of pixel size p only evaluates the waves longer than 2 p (shorter ones would alias), so every
profile samples the same landscape. NDVI follows a cosine season peaking in July: the peak greenness
drops with aridity (west of ~100 W) and with elevation above 1200 m, the seasonal amplitude grows
with latitude and elevation, higher spots are browner, and land-cover patches and per-date noise
add texture. Clouds are smooth weather-scale blobs per date.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from stages.synthesize.landscape import aridity, regional_elevation

RELIEF_WAVES = 48
COVER_WAVES = 24
CLOUD_WAVES = 12
RELIEF_WAVELENGTH_M = (2_000.0, 200_000.0)
COVER_WAVELENGTH_M = (1_000.0, 60_000.0)
CLOUD_WAVELENGTH_M = (200_000.0, 1_500_000.0)


@dataclass(frozen=True)
class Waves:
    """Plane waves: wavenumbers (rad/m) along x and y, phases and amplitudes."""

    kx: np.ndarray
    ky: np.ndarray
    phase: np.ndarray
    amplitude: np.ndarray

    @classmethod
    def draw(cls, rng: np.random.Generator, n: int, shortest_m: float, longest_m: float,
             exponent: float) -> Waves:
        """`n` waves, wavelengths log-uniform in [shortest, longest], amplitude ~ wavelength^exponent.

        Amplitudes are scaled so that the field has unit variance.
        """
        wavelength = np.exp(rng.uniform(np.log(shortest_m), np.log(longest_m), n))
        direction = rng.uniform(0, np.pi, n)
        k = 2 * np.pi / wavelength
        amplitude = wavelength**exponent
        amplitude *= np.sqrt(2 / (amplitude**2).sum())
        return cls(k * np.cos(direction), k * np.sin(direction), rng.uniform(0, 2 * np.pi, n),
                   amplitude)

    def resolved(self, pixel_m: float) -> Waves:
        """The waves a grid of `pixel_m` can hold: wavelengths of at least two pixels."""
        keep = 2 * np.pi / np.hypot(self.kx, self.ky) >= 2 * pixel_m
        return Waves(self.kx[keep], self.ky[keep], self.phase[keep], self.amplitude[keep])

    def evaluate(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        """The field on the grid of columns at `xs` and rows at `ys` (shape len(ys) x len(xs)).

        cos(kx x + ky y + phase) = cos(a) cos(b) - sin(a) sin(b), so each wave costs two outer
        products; waves are added one by one in a fixed order (byte-deterministic).
        """
        field = np.zeros((len(ys), len(xs)))
        for kx, ky, phase, amplitude in zip(self.kx, self.ky, self.phase, self.amplitude,
                                            strict=True):
            a, b = kx * xs + phase, ky * ys
            field += amplitude * (np.outer(np.cos(b), np.cos(a)) - np.outer(np.sin(b), np.sin(a)))
        return field


@dataclass(frozen=True)
class Clouds:
    """One acquisition's cloud field: cloudy where the unit-variance field exceeds `threshold`."""

    waves: Waves
    threshold: float

    @classmethod
    def draw(cls, rng: np.random.Generator, mean_fraction: float) -> Clouds | None:
        """Clouds of one date, or None for a clear scene (about a third of the scenes).

        The cover fraction is drawn in [0, 2 mean / 0.7], so the mean over scenes is about
        `mean_fraction`; the threshold is the normal quantile of that fraction.
        """
        if mean_fraction == 0 or rng.uniform() < 0.3:
            return None
        fraction = rng.uniform(0, min(2 * mean_fraction / 0.7, 0.95))
        waves = Waves.draw(rng, CLOUD_WAVES, *CLOUD_WAVELENGTH_M, 1.0)
        return cls(waves, NormalDist().inv_cdf(1 - fraction) if fraction > 0 else np.inf)

    def mask(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        """Cloudy pixels of the grid of columns at `xs` and rows at `ys`."""
        return self.waves.evaluate(xs, ys) > self.threshold


def relief(lon: np.ndarray, lat: np.ndarray, fractal: np.ndarray) -> np.ndarray:
    """Elevation [m]: regional trend plus a fractal surface whose amplitude grows with it."""
    trend = regional_elevation(lon, lat)
    return np.maximum(trend + (12 + 0.1 * trend) * fractal, 1.0)


def ndvi(lon: np.ndarray, lat: np.ndarray, elevation: np.ndarray, fractal: np.ndarray,
         cover: np.ndarray, doy: int, noise: np.ndarray) -> np.ndarray:
    """NDVI on day of year `doy` (peak greenness, seasonal amplitude, texture, noise)."""
    peak = np.clip(0.86 - 0.45 * aridity(lon, lat) - 1e-4 * np.maximum(elevation - 1200, 0),
                   0.2, 0.9)
    amplitude = np.clip(0.1 + 0.022 * (lat - 25) + 8e-5 * elevation, 0.05, 0.8) * peak
    peak_day = 195 + elevation / 100
    greenness = (1 + np.cos(2 * np.pi * (doy - peak_day) / 365.25)) / 2
    value = peak - amplitude * (1 - greenness) - 0.03 * fractal + 0.06 * cover + noise
    return np.clip(value, -0.1, 0.95)

