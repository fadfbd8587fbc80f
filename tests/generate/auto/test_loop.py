"""The offline AutoSciBench loop: hiding strategies, the judge, revision, experience cards, outputs."""

import numpy as np
import pandas as pd
import pytest

from stages.generate.auto import hiding, loop, outputs, solvers
from stages.generate.auto.generator import Concept, Menu, Recipe
from stages.generate.auto.hiding import SENTINEL, STRATEGIES, undo
from stages.generate.auto.loop import implement, judge, run_concept


@pytest.fixture
def table():
    return pd.DataFrame({"sample_id": [f"s{i:04d}" for i in range(1, 41)], "x": np.arange(40.0) / 4,
                         "y": np.linspace(1, 2, 40)})


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_undo_recovers_the_clean_table_from_what_the_task_states(table, name):
    artefacted, note = STRATEGIES[name](table, "y", np.random.default_rng(3))
    assert not artefacted.equals(table)
    recovered = undo(artefacted, "y", note, [name])
    if name == "sentinel_missing":
        assert (artefacted["y"] == SENTINEL).sum() == 2 and len(recovered) == 38
        pd.testing.assert_frame_equal(recovered, table[artefacted["y"] != SENTINEL].reset_index(drop=True))
    else:
        pd.testing.assert_frame_equal(recovered.reset_index(drop=True), table, check_exact=False, atol=1e-9)
    assert ("too high" in note) == (name == "calibration_offset")


def _task(hiding=()):
    return implement(Recipe("plant_drought_stress", "descriptive.conditional_mean", 300, tuple(hiding), 7))


def test_the_judge_grades_by_solve_rate_and_never_runs_an_unverifiable_task():
    task = _task()
    assert judge(task, lambda t, trial: t.gold)["difficulty"] == "easy"
    assert judge(task, lambda t, trial: t.gold if trial == 0 else None) == {
        "verifiable": True, "solved": 1, "trials": 3, "difficulty": "moderate", "reason": ""}
    assert judge(task, lambda t, trial: 1 / 0)["difficulty"] == "hard"
    task.verifiable, task.reason = False, "gold undefined"
    assert judge(task, lambda t, trial: pytest.fail("solver called")) == {
        "verifiable": False, "solved": None, "trials": 0, "difficulty": None, "reason": "gold undefined"}


def test_infrastructure_errors_are_not_counted_as_failures():
    task = _task()

    def flaky(t, trial):
        if trial == 1:
            raise loop.InfraError("sandbox could not start")
        return t.gold

    assert judge(task, flaky) == {"verifiable": True, "solved": 2, "trials": 2, "difficulty": "easy", "reason": ""}

    def down(t, trial):
        raise loop.InfraError("model API unreachable")

    assert judge(task, down) == {"verifiable": True, "solved": None, "trials": 0, "difficulty": None,
                                 "reason": "no trial ran (infrastructure)"}


def test_a_task_the_gate_refuses_is_unverifiable_and_never_tried():
    refuse = lambda t: "passed by the data-free nodata agent"  # noqa: E731
    verdict = judge(_task(), lambda t, trial: pytest.fail("solver called"), gate=refuse)
    assert verdict == {"verifiable": False, "solved": None, "trials": 0, "difficulty": None,
                       "reason": "passed by the data-free nodata agent"}


def test_a_recipe_outside_the_menu_is_refused_naming_what_is_outside():
    menu = Menu(("plant_drought_stress",), ("descriptive.conditional_mean",), ("sentinel_missing",))
    fine = Recipe("plant_drought_stress", "descriptive.conditional_mean", 300, ("sentinel_missing",))
    assert loop.checked(fine, menu) == fine
    with pytest.raises(ValueError, match=r"template 'causal.do_mean', scenario 'nowhere', hiding strategy 'x'"):
        loop.checked(Recipe("nowhere", "causal.do_mean", 300, ("x",)), menu)
    with pytest.raises(ValueError, match="repeated"):
        loop.checked(Recipe("plant_drought_stress", "descriptive.conditional_mean", 300,
                            ("sentinel_missing", "sentinel_missing")), menu)


def test_more_than_twelve_cards_are_sampled_uniformly_with_the_seed_and_kept_in_order():
    cards = [{"n": i} for i in range(30)]
    first = loop.read_cards(cards, np.random.default_rng(5))
    assert len(first) == loop.MAX_CARDS == 12
    assert [c["n"] for c in first] == sorted(c["n"] for c in first)
    assert first == loop.read_cards(cards, np.random.default_rng(5))
    assert first != loop.read_cards(cards, np.random.default_rng(6))
    assert loop.read_cards(cards[:12], np.random.default_rng(5)) == cards[:12]


def test_a_stated_calibration_offset_changes_the_answer_and_undoing_it_gives_the_gold():
    plain, hidden = _task(), _task(["calibration_offset"])
    assert hidden.verifiable and hidden.question == plain.question
    assert hidden.naive != pytest.approx(hidden.gold, rel=hidden.tolerance)
    assert hidden.notes and "instrument" in hidden.table.columns
    assert hidden.gold == pytest.approx(plain.gold, rel=1e-9)


def test_a_concept_stops_at_a_hard_task_keeps_it_and_writes_its_card():
    run = run_concept(Concept("biology", "table", ("descriptive",)), [], lambda t, trial: t.naive, seed=7)
    assert 1 <= len(run.rounds) <= loop.MAX_ROUNDS
    assert run.kept is not None and run.kept["difficulty"] == "hard"
    assert run.rounds[-1]["difficulty"] == "hard" and run.rounds[0]["recipe"]["hiding"] == []
    assert set(run.card) == {"concept", "summary", "useful_patterns", "anti_patterns", "selection_guidance",
                             "generation_guidance"}
    assert run.card["useful_patterns"] == sorted(run.rounds[-1]["recipe"]["hiding"])


def test_experience_cards_decide_which_hiding_strategy_is_tried_first():
    concept = Concept("chemistry", "table", ("predictive",))
    card = {"useful_patterns": ["sentinel_missing"]}
    with_card = run_concept(concept, [card], lambda t, trial: t.gold, seed=7)
    without = run_concept(concept, [], lambda t, trial: t.gold, seed=7)
    def first_hidden(run):
        return next(r["recipe"]["hiding"] for r in run.rounds if r["recipe"]["hiding"])

    assert first_hidden(with_card) == ["sentinel_missing"]
    assert first_hidden(without) == ["calibration_offset"]


def test_the_loop_writes_the_same_bytes_twice_and_keeps_the_gold_private(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "seed_concepts", lambda: [Concept("physics", "table", ("inferential",))])
    outputs.write_outputs(tmp_path / "one", 7, solvers.heuristic_solver)
    outputs.write_outputs(tmp_path / "two", 7, solvers.heuristic_solver)
    names = sorted(p.relative_to(tmp_path / "one").as_posix() for p in (tmp_path / "one").rglob("*.json"))
    assert names == ["cards.json", "private/gold.json", "report.json", "rounds.json", "tasks.json"]
    staged = sorted(p.relative_to(tmp_path / "one").as_posix() for p in (tmp_path / "one" / "tasks").rglob("*")
                    if p.is_file())
    assert staged and all(name.endswith(("/prompt.md", "/data/table.csv")) for name in staged)
    for name in staged:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert '"gold"' not in (tmp_path / "one" / "tasks.json").read_text()


def test_a_careful_analyst_recovers_the_clean_table_from_the_table_and_the_text_alone(table):
    rng = np.random.default_rng(11)
    artefacted, notes = table, []
    for name in ("calibration_offset", "duplicated_records", "sentinel_missing"):
        artefacted, note = STRATEGIES[name](artefacted, "y", rng)
        notes += [note] if note else []
    recovered = hiding.cleaned(artefacted, " ".join(notes))
    expected = undo(artefacted, "y", " ".join(notes), ["calibration_offset", "duplicated_records", "sentinel_missing"])
    pd.testing.assert_frame_equal(recovered, expected)
    assert "instrument" not in recovered.columns and recovered["sample_id"].is_unique
    coded = set(artefacted.loc[artefacted["y"] == SENTINEL, "sample_id"])
    assert len(coded) == 2 and len(recovered) == len(table) - 2
    kept = table[~table["sample_id"].isin(coded)].reset_index(drop=True)
    pd.testing.assert_frame_equal(recovered, kept, check_exact=False, atol=1e-9)  # every value as generated


def test_a_gold_that_does_not_follow_from_what_the_task_shows_is_unverifiable(monkeypatch):
    assert _task(["calibration_offset"]).verifiable
    monkeypatch.setattr(loop, "cleaned", lambda table, note: table)  # an analyst who cannot undo the offset
    task = _task(["calibration_offset"])
    assert not task.verifiable and task.reason == "the gold does not follow from what the task shows"
