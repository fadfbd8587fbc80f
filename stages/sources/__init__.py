"""Source adapters: one module of plain readers per raw source (`Params`, `read`, `read_*`)."""

from stages.registry import LazyModules

SOURCES = LazyModules("stages.sources", ["camels_us", "control", "crops", "fluxnet_ch4", "hdf", "imagery", "molecules"])
