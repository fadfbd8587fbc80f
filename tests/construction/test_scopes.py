from datetime import date

import pandas as pd
import pytest

from stages.catalog_scopes import ScopeSpec, read_prompt_block
from stages.construction.scopes import (
    ResolvedScope,
    ScopeUnavailable,
    render_scope_block,
    resolve_scope,
)

ENTITIES = pd.DataFrame({
    "gauge_id": ["01000001", "01000002", "03000001", "03000002", "10000001"],
    "huc_02": ["01", "01", "03", "03", "10"],
    "aridity": [0.5, 0.6, 0.9, 1.2, 1.5],
})
SPAN = (date(2000, 1, 1), date(2009, 12, 31))


def scope(**fields) -> ScopeSpec:
    return ScopeSpec(name="s", kind="geographic", description="Some basins", **fields)


def test_list_rule_selects_matching_entities_sorted():
    resolved = resolve_scope(scope(entities={"huc_02": ["03", "01"]}), ENTITIES, "gauge_id",
                             *SPAN, min_entities=1, min_years=1)
    assert resolved.entities == ("01000001", "01000002", "03000001", "03000002")
    assert (resolved.start, resolved.end) == SPAN


def test_range_rule_is_inclusive():
    resolved = resolve_scope(scope(entities={"aridity": {"min": 0.9, "max": 1.2}}), ENTITIES,
                             "gauge_id", *SPAN, min_entities=1, min_years=1)
    assert resolved.entities == ("03000001", "03000002")


def test_years_clip_to_the_data_span():
    resolved = resolve_scope(scope(years=(2005, 2014)), ENTITIES, "gauge_id", *SPAN,
                             min_entities=1, min_years=1)
    assert (resolved.start, resolved.end) == (date(2005, 1, 1), date(2009, 12, 31))


def test_sample_is_seeded_and_sorted():
    first = resolve_scope(scope(sample=3, seed=7), ENTITIES, "gauge_id", *SPAN, 1, 1)
    again = resolve_scope(scope(sample=3, seed=7), ENTITIES, "gauge_id", *SPAN, 1, 1)
    assert first.entities == again.entities
    assert list(first.entities) == sorted(first.entities)
    assert len(first.entities) == 3


def test_too_few_entities_is_unavailable_with_the_reason():
    with pytest.raises(ScopeUnavailable, match="scope selects 1 entities, the task needs 3"):
        resolve_scope(scope(entities={"huc_02": ["10"]}), ENTITIES, "gauge_id", *SPAN, 3, 1)


def test_too_few_years_is_unavailable():
    with pytest.raises(ScopeUnavailable, match="covers 0.00 years"):
        resolve_scope(scope(years=(2015, 2016)), ENTITIES, "gauge_id", *SPAN, 1, 1)


def test_sample_larger_than_pool_is_unavailable():
    with pytest.raises(ScopeUnavailable, match="samples 9 entities but only 5"):
        resolve_scope(scope(sample=9), ENTITIES, "gauge_id", *SPAN, 1, 1)


def test_block_round_trips_through_the_prompt():
    resolved = resolve_scope(scope(entities={"huc_02": ["01"]}), ENTITIES, "gauge_id", *SPAN, 1, 1)
    prompt = "# task\n\nDo it.\n\n" + render_scope_block(resolved)
    assert read_prompt_block(prompt, "Scope") == {
        "entity_key": "gauge_id", "entities": ["01000001", "01000002"],
        "start": "2000-01-01", "end": "2009-12-31",
    }


def test_resolved_scope_carries_the_spec_fields_and_the_span():
    spec = ScopeSpec(name="northeast", kind="geographic", description="New England basins",
                     citation="Newman et al. 2015", entities={"huc_02": ["01"]})
    assert resolve_scope(spec, ENTITIES, "gauge_id", *SPAN, 1, 1) == ResolvedScope(
        name="northeast", kind="geographic", description="New England basins", citation="Newman et al. 2015",
        entity_key="gauge_id", entities=("01000001", "01000002"), start=date(2000, 1, 1), end=date(2009, 12, 31),
    )


def test_several_rules_must_all_hold():
    resolved = resolve_scope(scope(entities={"huc_02": ["01", "03"], "aridity": {"min": 0.6}}), ENTITIES,
                             "gauge_id", *SPAN, 1, 1)
    assert resolved.entities == ("01000002", "03000001", "03000002")


def test_missing_values_never_satisfy_a_range_rule():
    entities = ENTITIES.assign(aridity=pd.array([0.5, None, 0.9, 1.2, None], dtype="Float64"))
    resolved = resolve_scope(scope(entities={"aridity": {"min": 0.6}}), entities, "gauge_id", *SPAN, 1, 1)
    assert resolved.entities == ("03000001", "03000002")


def test_rule_on_a_column_the_entities_lack_is_unavailable():
    with pytest.raises(ScopeUnavailable) as raised:
        resolve_scope(scope(entities={"elevation": {"min": 100}}), ENTITIES, "gauge_id", *SPAN, 1, 1)
    assert str(raised.value) == "entities have no column 'elevation'"


@pytest.mark.parametrize(("rule", "shown"), [(0.5, "0.5"), ({"min": 0.5, "above": 1}, "{'min': 0.5, 'above': 1}")])
def test_rule_that_is_neither_a_list_nor_a_range_is_unavailable(rule, shown):
    with pytest.raises(ScopeUnavailable) as raised:
        resolve_scope(scope(entities={"aridity": rule}), ENTITIES, "gauge_id", *SPAN, 1, 1)
    assert str(raised.value) == f"unreadable entity rule for 'aridity': {shown}"


def test_seeded_sample_draws_the_same_entities_every_time():
    assert resolve_scope(scope(sample=3, seed=7), ENTITIES, "gauge_id", *SPAN, 1, 1).entities == (
        "03000001", "03000002", "10000001")


def test_sample_of_the_whole_pool_takes_every_entity_once():
    resolved = resolve_scope(scope(sample=5, seed=3), ENTITIES, "gauge_id", *SPAN, 1, 1)
    assert resolved.entities == ("01000001", "01000002", "03000001", "03000002", "10000001")


def test_exactly_the_minimum_of_entities_is_enough():
    resolved = resolve_scope(scope(entities={"huc_02": ["03"]}), ENTITIES, "gauge_id", *SPAN, 2, 1)
    assert resolved.entities == ("03000001", "03000002")


def test_one_calendar_year_counts_as_one_year():
    # 2009-01-01 to 2009-12-31 is 364 days, 0.9966 years: within the 0.01-year slack of 1.
    resolved = resolve_scope(scope(years=(2009, 2009)), ENTITIES, "gauge_id", *SPAN, 1, 1)
    assert (resolved.start, resolved.end) == (date(2009, 1, 1), date(2009, 12, 31))


def test_one_calendar_year_is_short_of_two_and_says_how_long_it_is():
    with pytest.raises(ScopeUnavailable) as raised:
        resolve_scope(scope(years=(2009, 2009)), ENTITIES, "gauge_id", *SPAN, 1, 2)
    assert str(raised.value) == "scope covers 1.00 years of data, the task needs 2"


def test_block_is_rendered_with_sorted_keys():
    resolved = resolve_scope(scope(entities={"huc_02": ["01"]}), ENTITIES, "gauge_id", *SPAN, 1, 1)
    assert render_scope_block(resolved) == (
        "## Scope\n\nSome basins (2 gauge_id values, 2000-01-01 to 2009-12-31).\n\n"
        '```json\n{"end": "2009-12-31", "entities": ["01000001", "01000002"], "entity_key": "gauge_id", '
        '"start": "2000-01-01"}\n```\n'
    )


def test_prompt_without_a_scope_block_is_refused():
    with pytest.raises(ValueError) as raised:
        read_prompt_block("# task\n\n## Scope\n\nNo fence here.\n", "Scope")
    assert str(raised.value) == "prompt has no '## Scope' block with a ```json fence"


# --- the sampler, the year count and the entity minimum, pinned at their exact values -------------

# 20 basins listed out of order, so that a sampler drawing before sorting draws other basins.
TWENTY = pd.DataFrame({
    "gauge_id": ["01000009", "01000004", "01000007", "01000006", "01000016", "01000017", "01000003",
                 "01000013", "01000001", "01000002", "01000014", "01000011", "01000020", "01000010",
                 "01000015", "01000012", "01000005", "01000018", "01000019", "01000008"],
})


@pytest.mark.parametrize(
    ("seed", "drawn"),
    [
        # numpy.random.default_rng(seed).choice(<the 20 ids sorted>, size=5, replace=False), sorted;
        # seed 6 would draw 01000007 01000008 01000010 01000018 01000019 and seed 43 01000001 01000008
        # 01000009 01000012 01000020.
        (5, ("01000001", "01000010", "01000011", "01000014", "01000016")),
        (42, ("01000002", "01000009", "01000012", "01000014", "01000020")),
    ],
)
def test_sample_draws_with_the_scope_seed_from_the_sorted_ids(seed, drawn):
    resolved = resolve_scope(scope(sample=5, seed=seed), TWENTY, "gauge_id", *SPAN, 1, 1)
    assert resolved.entities == drawn


def test_a_sample_of_exactly_min_entities_passes_and_one_more_is_needed_above():
    assert len(resolve_scope(scope(sample=5, seed=5), TWENTY, "gauge_id", *SPAN, 5, 1).entities) == 5
    with pytest.raises(ScopeUnavailable) as raised:
        resolve_scope(scope(sample=5, seed=5), TWENTY, "gauge_id", *SPAN, 6, 1)
    assert str(raised.value) == "scope selects 5 entities, the task needs 6"


def test_one_entity_short_of_the_minimum_is_unavailable():
    with pytest.raises(ScopeUnavailable) as raised:
        resolve_scope(scope(entities={"huc_02": ["03"]}), ENTITIES, "gauge_id", *SPAN, 3, 1)
    assert str(raised.value) == "scope selects 2 entities, the task needs 3"


# Years are (end - start).days / 365.25 with 0.01 years of slack: ten years need 3649 days
# ((10 - 0.01) * 365.25 = 3648.85), three 1093 (1092.10), one 362 (361.60). Counting in 365-day
# years would accept 3648 days (9.9945); counting end - start + 1 days would accept 2009-12-27 too;
# a slack of 0.011 years would accept 1092 days.
@pytest.mark.parametrize(
    ("last", "min_years"),
    [
        (date(2009, 12, 31), 10),  # ten calendar years: 3652 days
        (date(2009, 12, 28), 10),  # 3649 days
        (date(2002, 12, 29), 3),  # 1093 days
        (date(2000, 12, 31), 1),  # one calendar year: 365 days (2000 is a leap year)
        (date(2000, 12, 28), 1),  # 362 days
    ],
)
def test_years_at_or_above_the_boundary_pass(last, min_years):
    resolved = resolve_scope(scope(), ENTITIES, "gauge_id", date(2000, 1, 1), last, 1, min_years)
    assert (resolved.start, resolved.end) == (date(2000, 1, 1), last)


@pytest.mark.parametrize(
    ("last", "min_years", "message"),
    [
        (date(2009, 12, 27), 10, "scope covers 9.99 years of data, the task needs 10"),  # 3648 days
        (date(2002, 12, 28), 3, "scope covers 2.99 years of data, the task needs 3"),  # 1092 days
        (date(2000, 12, 27), 1, "scope covers 0.99 years of data, the task needs 1"),  # 361 days
    ],
)
def test_one_day_below_the_boundary_is_unavailable(last, min_years, message):
    with pytest.raises(ScopeUnavailable) as raised:
        resolve_scope(scope(), ENTITIES, "gauge_id", date(2000, 1, 1), last, 1, min_years)
    assert str(raised.value) == message


def test_ten_calendar_years_of_a_scope_count_as_ten():
    resolved = resolve_scope(scope(years=(2000, 2009)), ENTITIES, "gauge_id", date(1990, 1, 1),
                             date(2014, 12, 31), 1, 10)
    assert (resolved.start, resolved.end) == (date(2000, 1, 1), date(2009, 12, 31))


# --- the query-size bound: the same query cost at every profile ------------------------------------

def test_a_slice_above_the_entity_bound_is_a_seeded_sample_said_in_the_description():
    resolved = resolve_scope(scope(max_entities=4), TWENTY, "gauge_id", *SPAN, 1, 1)
    # numpy.random.default_rng(0).choice(<the 20 ids sorted>, size=4, replace=False), sorted
    assert resolved.entities == ("01000006", "01000010", "01000012", "01000015")
    assert resolved.description == "Some basins; a seeded random sample of 4 of its 20"


def test_a_sample_scope_draws_first_and_the_bound_then_samples_its_draw():
    resolved = resolve_scope(scope(sample=5, seed=42, max_entities=5), TWENTY, "gauge_id", *SPAN, 1, 1)
    assert resolved.entities == ("01000002", "01000009", "01000012", "01000014", "01000020")
    assert resolved.description == "Some basins"


def test_a_slice_at_the_bounds_is_left_as_it_is():
    resolved = resolve_scope(scope(max_entities=5, max_years=10), ENTITIES, "gauge_id", *SPAN, 1, 1)
    assert resolved == resolve_scope(scope(), ENTITIES, "gauge_id", *SPAN, 1, 1)


def test_a_period_above_the_year_bound_keeps_its_last_calendar_years():
    resolved = resolve_scope(scope(years=(1980, 2014), max_years=10), ENTITIES, "gauge_id",
                             date(1980, 1, 1), date(2014, 12, 31), 1, 10)
    assert (resolved.start, resolved.end) == (date(2005, 1, 1), date(2014, 12, 31))
    assert resolved.description == "Some basins; its last 10 calendar years"


def test_a_bounded_period_still_has_to_cover_the_task_minimum():
    with pytest.raises(ScopeUnavailable) as raised:
        resolve_scope(scope(max_years=3), ENTITIES, "gauge_id", *SPAN, 1, 4)
    assert str(raised.value) == "scope covers 3.00 years of data, the task needs 4"
