"""Scoring generated instances and attributing wrong answers to an error type."""

from stages.generate.sda.evaluate import judged, summary

NUMBER = {"instance_id": "n1", "task_type": "descriptive", "domain": "biology", "answer": 10.0, "answer_kind": "number",
          "tolerance": 0.02, "options": [12.0, 10.0, 20.0, 5.0], "correct_option": "B",
          "option_perturbations": ["confusion", None, "default", "diffusion"]}
ENTITY = {"instance_id": "e1", "task_type": "exploratory", "domain": "physics", "answer": "par",
          "answer_kind": "entity", "tolerance": 0.02, "options": ["par", "soil_moisture", "air_co2", "genotype"],
          "correct_option": "A", "option_perturbations": [None, "diffusion", "randomization", "default"]}


def test_mcq_letters_score_and_a_chosen_distractor_names_its_error():
    assert judged(NUMBER, "B", "mcq") == {"correct": True, "error": None}
    assert judged(NUMBER, " a) twelve", "mcq") == {"correct": False, "error": "function"}
    assert judged(NUMBER, "D", "mcq") == {"correct": False, "error": "variable"}
    assert judged(NUMBER, "", "mcq") == {"correct": False, "error": "unattributed"}


def test_oeq_numbers_use_the_relative_tolerance_and_match_perturbed_derivations():
    assert judged(NUMBER, "10.19", "oeq") == {"correct": True, "error": None}
    assert judged(NUMBER, 10.21, "oeq")["correct"] is False
    assert judged(NUMBER, 19.9, "oeq") == {"correct": False, "error": "conclusion"}
    assert judged(NUMBER, "5.05", "oeq") == {"correct": False, "error": "variable"}
    assert judged(NUMBER, "7", "oeq") == {"correct": False, "error": "unattributed"}
    assert judged(NUMBER, "nan", "oeq") == {"correct": False, "error": "unattributed"}
    assert judged(ENTITY, "par", "oeq") == {"correct": True, "error": None}
    assert judged(ENTITY, "air_co2", "oeq") == {"correct": False, "error": "scope"}


def test_ner_divides_errors_of_a_type_by_the_responses_that_could_show_it():
    responses = {("n1", "oeq"): 12.0, ("n1", "mcq"): "B", ("e1", "oeq"): "soil_moisture", ("e1", "mcq"): "C"}
    report = summary([NUMBER, ENTITY], responses)
    oeq = report["oeq"]["all"]["all"]
    assert oeq == {"n": 2, "accuracy": 0.0, "unattributed": 0,
                   "ner": {"conclusion": 0.0, "function": 1.0, "scope": 0.0, "variable": 0.5}}
    assert report["mcq"]["all"]["all"]["accuracy"] == 0.5
    assert report["mcq"]["domain"]["physics"]["ner"]["scope"] == 1.0
    assert report["oeq"]["task_type"]["descriptive"]["ner"] == {"conclusion": 0.0, "function": 1.0, "variable": 0.0}


def test_a_listed_name_no_perturbation_gave_stays_unattributed_and_offers_no_opportunity():
    listed = ENTITY | {"instance_id": "e2", "option_perturbations": [None, "listed", "confusion", "listed"]}
    assert judged(listed, "B", "mcq") == {"correct": False, "error": "unattributed"}
    assert judged(listed, "soil_moisture", "oeq") == {"correct": False, "error": "unattributed"}
    assert judged(listed, "air_co2", "oeq") == {"correct": False, "error": "function"}
    report = summary([listed], {("e2", "mcq"): "D", ("e2", "oeq"): "air_co2"})
    assert report["mcq"]["all"]["all"] == {"n": 1, "accuracy": 0.0, "unattributed": 1, "ner": {"function": 0.0}}
    assert report["oeq"]["all"]["all"] == {"n": 1, "accuracy": 0.0, "unattributed": 0, "ner": {"function": 1.0}}
