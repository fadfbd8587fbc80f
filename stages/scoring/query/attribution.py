"""Error attribution without a human: an agent's checkpoints against the annotator's.

MoSciBench attributes each failed run by hand to alignment (the modalities were joined wrongly),
modeling (features or fit wrong on a correct alignment) or reasoning (correct intermediates, wrong
conclusion). A task here declares checkpoints an agent may write (`TaskSpec.checkpoints`); the
annotator writes the same files at build time and they are kept with the gold. For a query the
agent did not pass:

- its alignment checkpoint differs from the annotator's            -> `alignment`
- alignment matches (or is not declared) and modeling differs     -> `modeling`
- every checkpoint it wrote matches, and it wrote the last stage's -> `reasoning`
- otherwise (nothing written, unreadable, or a mismatch whose cause an earlier, unwritten
  checkpoint might be)                                            -> `unattributed`

A checkpoint matches when it has exactly the annotator's keys and at least `min_share` of the
compared values agree within `abs_tol + rel_tol * |annotator's value|` (both missing agrees). The
agent's file is untrusted input: it is read from bytes the harness capped, never from a path, and
parsed in a child process under a memory bound.
"""

from __future__ import annotations

import math
from functools import partial

import pandas as pd

from stages.catalog import CheckpointSpec, TaskSpec
from stages.scoring.query.artifacts import ArtifactError, untrusted_parquet
from stages.scoring.query.confined import BOUNDS, Bounds, read_confined

STAGES = ("alignment", "modeling")
CLASSES = ("alignment", "modeling", "reasoning", "unattributed")
MAX_ROWS = 100_000
DIGITS = 9


class CheckpointError(ValueError):
    """A checkpoint file cannot be read as its spec says; the message says why."""


def read_checkpoint(spec: CheckpointSpec, data: bytes, bounds: Bounds = BOUNDS) -> pd.DataFrame:
    """The checkpoint's key and compared columns, one row per key, sorted; raises CheckpointError.

    The file is parsed in a forked child under `bounds` (`stages.scoring.query.confined`); a child past
    a bound or dead is a `CheckpointError` like any unreadable file.
    """
    return read_confined(partial(parse_checkpoint, spec, data), spec.file, CheckpointError, bounds)


def parse_checkpoint(spec: CheckpointSpec, data: bytes) -> pd.DataFrame:
    """`read_checkpoint` in this process, without a memory bound: only for a child or trusted bytes.

    The footer is checked before anything is decoded (`stages.scoring.query.artifacts.untrusted_parquet`),
    and only the key and compared columns are read.
    """
    try:
        parquet = untrusted_parquet(data, spec.file, spec.key + spec.columns, MAX_ROWS)
        frame = parquet.read(columns=spec.key + spec.columns, use_threads=False).to_pandas(use_threads=False)
    except ArtifactError as error:
        raise CheckpointError(str(error)) from error
    except Exception as error:  # noqa: BLE001 - any unreadable file is the agent's problem
        raise CheckpointError(f"{spec.file} is not a readable Parquet file: {type(error).__name__}") from error
    for column in spec.key:
        frame[column] = frame[column].astype(str)
    for column in spec.columns:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    if frame.duplicated(spec.key).any():
        raise CheckpointError(f"{spec.file} repeats keys")
    return frame.sort_values(spec.key, ignore_index=True)


def records(spec: CheckpointSpec, frame: pd.DataFrame) -> list[dict]:
    """A checkpoint as JSON records (how the annotator's is kept with the gold), values rounded."""
    out = []
    for row in frame.itertuples(index=False):
        row = row._asdict()
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else
                        round(v, DIGITS) if isinstance(v, float) else v) for k, v in row.items()})
    return out


def _agree(value: float, reference: float, spec: CheckpointSpec) -> bool:
    if math.isnan(value) or math.isnan(reference):
        return math.isnan(value) and math.isnan(reference)
    return abs(value - reference) <= spec.abs_tol + spec.rel_tol * abs(reference)


def matches(spec: CheckpointSpec, agent: pd.DataFrame, reference: list[dict]) -> bool:
    """Whether the agent's checkpoint agrees with the annotator's (see the module docstring)."""
    expected = pd.DataFrame(reference, columns=spec.key + spec.columns)
    for column in spec.key:
        expected[column] = expected[column].astype(str)
    if set(map(tuple, agent[spec.key].to_numpy())) != set(map(tuple, expected[spec.key].to_numpy())):
        return False
    joined = expected.merge(agent, on=spec.key, suffixes=("_ref", ""))
    agreeing = total = 0
    for column in spec.columns:
        for value, ref in zip(joined[column].astype(float), joined[f"{column}_ref"].astype(float), strict=True):
            agreeing += _agree(value, ref, spec)
            total += 1
    return total > 0 and agreeing >= spec.min_share * total


def attribute(task: TaskSpec, passed: bool, written: dict[str, bytes | None],
              reference: dict[str, list[dict]]) -> str | None:
    """The failed query's error class (None when it passed or the task declares no checkpoints)."""
    if passed or not task.checkpoints:
        return None
    verdicts: dict[str, bool | None] = {}
    for spec in task.checkpoints:
        data = written.get(spec.file)
        if data is None or spec.file not in reference:
            verdicts[spec.stage] = None
            continue
        try:
            verdicts[spec.stage] = matches(spec, read_checkpoint(spec, data), reference[spec.file])
        except CheckpointError:
            verdicts[spec.stage] = None
    declared = [stage for stage in STAGES if stage in verdicts]
    for position, stage in enumerate(declared):
        if verdicts[stage] is False:
            earlier = declared[:position]
            return stage if all(verdicts[s] is True for s in earlier) else "unattributed"
    return "reasoning" if declared and verdicts[declared[-1]] is True else "unattributed"
