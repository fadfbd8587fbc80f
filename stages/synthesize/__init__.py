"""Synthetic raw-data generators, one module per source, each writing the source's native format."""

from stages.registry import LazyModules

# imported when first looked up: importing one generator does not load the others' libraries
SYNTHESIZERS = LazyModules("stages.synthesize", ["camels_us", "control", "crops", "fluxnet_ch4", "hdf", "imagery",
                                                 "molecules"])
