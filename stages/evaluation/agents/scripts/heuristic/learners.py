"""The regression learners, built deterministically (fixed seeds, one thread, no early stopping).

- `linear`: least squares with a ridge penalty on standardised features (the many correlated lag
  features make plain least squares unstable outside the training period);
- `forest`: a random forest;
- `boosting`: histogram gradient-boosted trees (`quick_boosting`: fewer of them);
- `mean`: the training mean (the fallback of last resort).
"""

from __future__ import annotations

import numpy as np
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

ALPHAS = np.logspace(-1, 3.5, 10)
# Histogram bins per feature for boosting. An entity's record is a few hundred to a few thousand
# days over ~250 driver features: 255 bins (the default) split almost every distinct value, and
# building the histograms was most of a forecast's time. 63 bins fit 3.3x faster on a 500-day series.
MAX_BINS = 63


def linear():
    """Ridge regression on standardised features, its penalty chosen by blocked cross-validation.

    Three contiguous folds in time order (no shuffling: neighbouring days are alike, so shuffled
    folds would pick too small a penalty).
    """
    search = GridSearchCV(Ridge(), {"alpha": ALPHAS}, cv=KFold(3), scoring="neg_mean_squared_error")
    return make_pipeline(StandardScaler(), search)


def forest():
    """A random forest of 30 trees, leaves of at least 5 samples."""
    return RandomForestRegressor(n_estimators=30, min_samples_leaf=5, max_features=0.3,
                                 random_state=0, n_jobs=1)


def boosting():
    """Histogram gradient boosting, 60 shallow trees."""
    return HistGradientBoostingRegressor(max_iter=60, learning_rate=0.15, max_leaf_nodes=15,
                                         min_samples_leaf=20, l2_regularization=1.0, max_bins=MAX_BINS,
                                         early_stopping=False, random_state=0)


def quick_boosting():
    """Histogram gradient boosting, 50 shallow trees (a fast driver model)."""
    return HistGradientBoostingRegressor(max_iter=50, learning_rate=0.15, max_leaf_nodes=15,
                                         min_samples_leaf=20, l2_regularization=1.0, max_bins=MAX_BINS,
                                         early_stopping=False, random_state=0)


def mean():
    """The training mean."""
    return DummyRegressor(strategy="mean")


LEARNERS = {"linear": linear, "forest": forest, "boosting": boosting,
            "quick_boosting": quick_boosting, "mean": mean}


def fit_predict(learner: str, x_train: np.ndarray, y_train: np.ndarray,
                x_new: np.ndarray) -> np.ndarray:
    """Fit one learner and predict new rows; too few samples for it fall back to the mean.

    No new rows (an entity that owes none) is no prediction, not a fit.
    """
    if len(x_new) == 0:
        return np.empty(0)
    if len(y_train) < 30:
        learner = "mean"
    model = LEARNERS[learner]().fit(x_train, y_train)
    return np.asarray(model.predict(x_new), dtype=float)
