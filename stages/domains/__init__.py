"""Domain aligners: each joins its sources' tables on shared keys into `entities` + `timeseries` + ..."""

from stages.domains import camels, cropbench, methanewet, molecules

ALIGNERS = {
    "camels": camels,
    "cropbench": cropbench,
    "methanewet": methanewet,
    "molecules": molecules,
}
