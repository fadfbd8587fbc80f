"""Fuzz the answer parsing and scoring: any `answer.json` text gets exactly one outcome and a bounded score."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st
from scibench_testing.fuzzing import FUZZ, counted, mutated

from stages.catalog import AnswerSpec, HypothesisSpec, MetricSpec
from stages.scoring.query.outcomes import Execution, Outcome, classify
from stages.scoring.query.scorer import QueryScore, score_query

METRICS = AnswerSpec(metrics=[
    MetricSpec(name="nse", description="NSE", target="> 0.3", valid_range=(None, 1)),
    MetricSpec(name="rmse", description="RMSE", target="lower is better", valid_range=(0, None)),
    MetricSpec(name="bias", description="bias", target="<= 0.5"),
    MetricSpec(name="share", description="share", target="== 0.25", valid_range=(0, 1)),
])
HYPOTHESES = {
    "number": HypothesisSpec(format="number", description="d", valid_range=(-100, 100)),
    "boolean": HypothesisSpec(format="boolean", description="d"),
    "category": HypothesisSpec(format="category", description="d", categories=["wet", "dry", "-1"]),
    "list": HypothesisSpec(format="list", description="d", comparator=">=", abs_tol=0.5),
    "coordinates": HypothesisSpec(format="coordinates", description="d"),
}
FINITE = st.floats(allow_nan=False, allow_infinity=False)
GOLD = {  # format -> gold answers the annotator could have produced
    "number": FINITE, "boolean": st.booleans(), "category": st.sampled_from(["wet", "dry"]),
    "list": st.lists(st.one_of(FINITE, st.sampled_from(["wet", "a"])), max_size=3),
    "coordinates": st.tuples(st.floats(-90, 90), st.floats(-180, 180)).map(list),
}
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                    max_leaves=12)
NAMES = st.sampled_from(["nse", "rmse", "bias", "share", "NSE", "extra", ""])


@st.composite
def spec_and_gold(draw: st.DrawFn) -> tuple[AnswerSpec, dict]:
    kind = draw(st.sampled_from(["metrics", *HYPOTHESES]), label="spec")
    if kind == "metrics":
        gold = {name: draw(st.one_of(st.none(), FINITE)) for name in ("nse", "rmse", "bias", "share")}
        return METRICS, {"metrics": gold}
    return AnswerSpec(hypothesis=HYPOTHESES[kind]), {"answer": draw(GOLD[kind], label="gold")}


def check_score(spec: AnswerSpec, gold: dict, text: str, exit_code: int | None) -> None:
    """One outcome; a parsed answer only when answered or unrealistic; rates and rewards in [0, 1]."""
    execution = Execution(exit_code, False, None, text)
    outcome, parsed = classify(spec, execution)
    assert isinstance(outcome, Outcome)
    assert (parsed is not None) == (outcome in (Outcome.ANSWERED, Outcome.UNREALISTIC))
    score = score_query(spec, execution, gold)
    assert isinstance(score, QueryScore) and score.outcome is outcome
    assert 0.0 <= score.pass_rate <= 1.0 and 0.0 <= score.reward <= 1.0 and math.isfinite(score.reward)
    assert (score.pass_rate, score.reward) == (0.0, 0.0) or outcome is Outcome.ANSWERED


def valid_answer(spec: AnswerSpec, gold: dict) -> bytes:
    return json.dumps(gold if spec.hypothesis is not None else {"metrics": {"nse": 0.5, "rmse": 2.0}}).encode()


@FUZZ
@given(data=st.data())
@counted
def test_scoring_text(data):
    spec, gold = data.draw(spec_and_gold(), label="spec and gold")
    text = data.draw(st.one_of(
        st.text(), st.sampled_from(["", "null", "[]", "{}", "NaN", "1e400", "-1", '{"metrics": {"nse": 1e400}}',
                                    "[" * 100_000, '{"answer": ' * 50_000, '"' + "a" * 100_000 + '"']),
        mutated(valid_answer(spec, gold)).map(lambda raw: raw.decode("utf-8", "replace"))), label="text")
    check_score(spec, gold, text, data.draw(st.sampled_from([0, 1, None]), label="exit code"))


@FUZZ
@given(data=st.data())
@counted
def test_scoring_json(data):
    spec, gold = data.draw(spec_and_gold(), label="spec and gold")
    value = data.draw(st.one_of(JSON, st.integers(-10**400, 10**400), st.lists(JSON, min_size=2, max_size=2)),
                      label="value")
    document = data.draw(st.one_of(
        st.fixed_dictionaries({"metrics": st.dictionaries(NAMES, st.one_of(JSON, FINITE), max_size=5)}),
        st.just({"answer": value}), st.just({"metrics": value}), JSON), label="document")
    check_score(spec, gold, json.dumps(document), 0)
