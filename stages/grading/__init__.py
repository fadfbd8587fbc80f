"""Grading: hidden truth, untrusted artifacts, metrics recomputed by the harness, reference models."""
