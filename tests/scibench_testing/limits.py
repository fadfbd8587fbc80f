"""Sandbox limits for tests: the defaults, through the one translation, with some fields set in bytes."""

from __future__ import annotations

from dataclasses import replace

from stages.sandbox import Limits, SandboxLimits


def limits_with(**overrides) -> Limits:
    """`SandboxLimits()` as the sandbox takes it, with `overrides` (fields of `Limits`) replaced."""
    return replace(SandboxLimits().to_limits(), **overrides)
