"""Source adapters: one module of plain readers per raw source (`Params`, `read`, `read_*`)."""

from stages.sources import camels_us, crops, fluxnet_ch4, hdf, imagery, molecules

SOURCES = {
    "camels_us": camels_us,
    "crops": crops,
    "fluxnet_ch4": fluxnet_ch4,
    "hdf": hdf,
    "imagery": imagery,
    "molecules": molecules,
}
