"""Domain aligners: each joins its sources' tables on shared keys into `entities` + `timeseries` + ..."""

from stages.domains import camels, cells, control, cropbench, gridcells, methanewet, molecules

ALIGNERS = {
    "camels": camels,
    "cells": cells,
    "control": control,
    "cropbench": cropbench,
    "gridcells": gridcells,
    "methanewet": methanewet,
    "molecules": molecules,
}
