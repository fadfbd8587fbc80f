"""Every causal and mechanistic template on generated datasets: it binds, derives deterministically, its
confusion changes the answer, and the verifier accepts its instances."""

import math
import warnings
from collections import Counter

import pytest
from scibench_testing.sda_contexts import generated_contexts, template_bindings

from stages.generate.sda.instances import candidates
from stages.generate.sda.templates import Context, causal, mechanistic

TEMPLATES = {t.id: t for t in (*causal.TEMPLATES, *mechanistic.TEMPLATES)}


@pytest.fixture(scope="module")
def generated() -> list[Context]:
    return generated_contexts()


@pytest.mark.parametrize("template_id", sorted(TEMPLATES))
def test_every_template_binds_derives_and_has_a_confusion_that_differs(template_id: str, generated: list[Context]):
    template = TEMPLATES[template_id]
    found = template_bindings(template, generated, 2)
    assert len(found) >= 5, template_id
    differs = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for context, binding in found:
            answer = template.derive(context, binding)
            assert template.derive(context, binding) == answer  # deterministic
            if template.answer == "number":
                assert isinstance(answer, float) and math.isfinite(answer), (context.scenario.id, binding)
            else:
                assert answer in binding["candidates"].split(", "), (context.scenario.id, binding)
            for variant in template.confusion(context, binding):
                other = template.derive(context, variant)
                if isinstance(answer, str):
                    differs += other != answer
                else:
                    differs += math.isfinite(other) and abs(other - answer) > template.tolerance * abs(answer)
    assert differs >= 1, template_id


@pytest.mark.parametrize("template_id", sorted(TEMPLATES))
def test_the_verifier_accepts_instances_of_every_template(template_id: str, generated: list[Context]):
    found = []
    for context in generated[::3]:
        found += candidates(TEMPLATES[template_id], context, seed=7, attempts=3, rejected=Counter())
    assert found, f"{template_id} yields no verified instance"
    for instance in found:
        assert instance["option_perturbations"].count(None) == 1
        assert len(set(map(str, instance["options"]))) == len(instance["options"]) in (3, 4)
        assert "{" not in instance["question"] and instance["template"] == template_id
