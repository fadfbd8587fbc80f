"""Domain aligners: each joins its sources' tables on shared keys into `entities` + `timeseries` + ..."""

from stages.domains import camels, molecules

ALIGNERS = {"camels": camels, "molecules": molecules}
