"""Causal templates: answers come from replaying the hidden generator under interventions, or its graph.

An agent sees only the observational table, so it has to adjust for confounding (or recover the
graph) to answer; the confusion distractor of each template is the answer a naive observational
analysis gives, which is what SDA's Relationship errors look like.

`effects` asks for numbers (means, contrasts, direct effects, mediated shares, spreads under an
intervention), `structure` for variables (a non-cause, a mediator, the strongest cause); both
replay the generator and read its graph through `shared`.
"""

from __future__ import annotations

from stages.generate.sda.templates.causal import effects, structure

ORDER = [
    "causal.do_mean",
    "causal.contrast",
    "causal.non_cause",
    "causal.mediator",
    "causal.strongest_cause",
    "causal.controlled_direct_effect",
    "causal.mediated_share",
    "causal.do_spread",
]
TEMPLATES = sorted([*effects.TEMPLATES, *structure.TEMPLATES], key=lambda template: ORDER.index(template.id))
