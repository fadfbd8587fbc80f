from datetime import date

import pandas as pd
import pytest

from stages.catalog import ScopeSpec
from stages.scopes import ScopeUnavailable, parse_scope_block, render_scope_block, resolve_scope

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
