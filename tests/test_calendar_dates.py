"""`tables.calendar_dates` against Python's own calendar, on every day of years that test the leap rules."""

import datetime

import numpy as np

from stages.tables import calendar_dates


def test_every_day_and_every_impossible_one_matches_the_python_calendar():
    years = [1, 4, 100, 1582, 1899, 1900, 1970, 1999, 2000, 2001, 2024, 2100, 2400, 9999]
    y, m, d = (a.ravel() for a in np.meshgrid(years, np.arange(-1, 15), np.arange(-1, 34), indexing="ij"))
    dates, valid = calendar_dates(y, m, d)
    for year, month, day, date, ok in zip(y, m, d, dates, valid, strict=True):
        try:
            expected = datetime.date(int(year), int(month), int(day))
        except ValueError:
            assert not ok, (year, month, day)
        else:
            assert ok and date.astype(datetime.date) == expected, (year, month, day)


def test_years_outside_the_date_types_and_huge_parts_are_invalid_without_overflow():
    y = np.array([0, -1, 10_000, 2000, 2000, 2**62])
    m = np.array([1, 1, 1, 2**62, 1, 1])
    d = np.array([1, 1, 1, 1, 2**62, 1])
    assert not calendar_dates(y, m, d)[1].any()
