"""Synthetic raw-data generators, one module per source, each writing the source's native format."""

from stages.synthesize import camels_us, control, crops, fluxnet_ch4, hdf, imagery, molecules

SYNTHESIZERS = {
    "camels_us": camels_us,
    "control": control,
    "crops": crops,
    "fluxnet_ch4": fluxnet_ch4,
    "hdf": hdf,
    "imagery": imagery,
    "molecules": molecules,
}
