from datetime import date

import pandas as pd
import pytest

from stages.catalog import ScopeSpec
from stages.scopes import (
    ResolvedScope,
    ScopeUnavailable,
    parse_scope_block,
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
    assert parse_scope_block(prompt) == {
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
        parse_scope_block("# task\n\n## Scope\n\nNo fence here.\n")
    assert str(raised.value) == "prompt has no '## Scope' block with a ```json fence"
