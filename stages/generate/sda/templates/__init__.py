"""The question templates by task type (SDA's six), each with its derivation and perturbations."""

from __future__ import annotations

from stages.generate.sda.templates import causal, descriptive, exploratory, inferential, mechanistic, predictive
from stages.generate.sda.templates.base import TASK_TYPES, Binding, Context, Template

TEMPLATES: dict[str, Template] = {t.id: t for module in (descriptive, inferential, causal, mechanistic,
                                                         exploratory, predictive) for t in module.TEMPLATES}

__all__ = ["TASK_TYPES", "TEMPLATES", "Binding", "Context", "Template"]
