"""Source adapters: one module of plain readers per raw source (`Params`, `read`, `read_*`)."""

from stages.sources import camels_us, hdf, imagery, molecules

SOURCES = {"camels_us": camels_us, "hdf": hdf, "imagery": imagery, "molecules": molecules}
