"""The multimodal hypothesis tasks as a reviewer reads them: typed answers, modalities staged apart,
checkpoints for attribution, a declared prior, and prompts that leak no source."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from scibench_testing.annotators import CATALOG

from stages.catalog import HYPOTHESIS_TYPES, load_catalog

DOMAINS = ["gridcells", "molecules", "cells"]
DOI = re.compile(r"10\.\d{4,9}/\S+")


@pytest.fixture(scope="module")
def tasks():
    return load_catalog(CATALOG, DOMAINS)


def test_every_task_is_a_typed_hypothesis_of_a_moscibench_problem_type(tasks):
    assert all(t.spec.answer.hypothesis is not None for t in tasks)
    types = Counter(t.spec.category for t in tasks)
    assert set(types) <= set(HYPOTHESIS_TYPES)
    assert {"causal_inference", "correlation_analysis", "pattern_discovery", "comparative_analysis"} <= set(types)
    modalities = {m for t in tasks for m in t.spec.modalities}
    assert {"imagery", "gridded", "tabular", "molecular", "sparse_counts", "timeseries"} <= modalities
    assert len(tasks) >= 30


def test_each_task_stages_a_modality_apart_and_declares_both_checkpoints(tasks):
    for task in tasks:
        assert task.spec.data.native, task.spec.id
        assert sorted(c.stage for c in task.spec.checkpoints) == ["alignment", "modeling"], task.spec.id
        assert "share no key" in task.spec.prompt, task.spec.id
        for checkpoint in task.spec.checkpoints:
            assert f"work/{checkpoint.file}" in task.spec.prompt, (task.spec.id, checkpoint.file)


def test_a_number_answer_has_a_bootstrap_tolerance_and_priors_are_declared(tasks):
    for task in tasks:
        hypothesis = task.spec.answer.hypothesis
        if hypothesis.format == "number":
            assert hypothesis.bootstrap is not None, task.spec.id
            assert hypothesis.prior is not None, task.spec.id


def test_no_prompt_names_its_source_or_a_doi(tasks):
    for task in tasks:
        surname = task.spec.source.citation.split(",")[0].strip()
        assert surname not in task.spec.prompt, task.spec.id
        assert not DOI.search(task.spec.prompt), task.spec.id
        assert "prior" not in task.spec.prompt.lower(), task.spec.id
