"""Mechanistic templates: fit the form of a mechanism to the observed table.

`forms` states a functional form (power law, exponential, saturating, Arrhenius) and asks for the
fitted parameter; `equations` states a scenario mechanism's own equation and asks for a constant
refit from the table, a local elasticity, which input matters most or which enters it directly
(`stated` writes that equation out and refits its constant; `shared` holds what both use).
"""

from __future__ import annotations

from stages.generate.sda.templates.mechanistic import equations, forms

ORDER = [
    "mechanistic.power_law_exponent",
    "mechanistic.exponential_rate",
    "mechanistic.fitted_constant",
    "mechanistic.half_saturation",
    "mechanistic.elasticity",
    "mechanistic.direct_input",
    "mechanistic.dominant_input",
    "mechanistic.activation_energy",
]
TEMPLATES = sorted([*forms.TEMPLATES, *equations.TEMPLATES], key=lambda template: ORDER.index(template.id))
