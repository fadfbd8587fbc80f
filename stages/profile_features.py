"""The names and definitions of the per-entity profile features (computed in `stages.scoring.query.profiles`).

A foundation below the catalog and scoring: the catalog's specs validate feature names with it. Kept
free of numpy: the sandbox tests load the catalog in a small venv without the scientific stack.
"""

PROFILE_DEFINITIONS = {
    "mean": "the mean of the observed values",
    "std": "the population standard deviation of the observed values",
    "cv": "std / |mean| (0 when the mean is 0)",
    "q10": "the 10 % quantile of the observed values (linear interpolation)",
    "q90": "the 90 % quantile of the observed values (linear interpolation)",
    "lag1": "the Pearson correlation of consecutive observed values (0 for a constant series)",
    "seasonal_amplitude": "the largest minus the smallest of the calendar-month means",
    "trend": "the least-squares slope of the values on time, per year",
}
