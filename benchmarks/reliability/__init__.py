"""Reliability of the sandbox and the harness: the attack catalog, its range and its report."""
