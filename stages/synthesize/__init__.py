"""Synthetic raw-data generators, one module per source, each writing the source's native format."""

from stages.synthesize import camels_us, hdf, imagery, molecules

SYNTHESIZERS = {
    "camels_us": camels_us,
    "hdf": hdf,
    "imagery": imagery,
    "molecules": molecules,
}
