"""Fuzz the molecules reader: mutated real SDF records, a Molfile and a SMILES file."""

from __future__ import annotations

import functools

from hypothesis import given
from hypothesis import strategies as st
from scibench_testing.fuzzing import FUZZ, check_reader, counted, mutated, raw_folder
from scibench_testing.realdata import realdata

from stages.sources import molecules


def first_records(name: str, n: int) -> bytes:
    """The first `n` records (through their `$$$$` line) of a real SD file."""
    text = realdata("molecules_rdkit", name).read_bytes()
    end = 0
    for _ in range(n):
        end = text.index(b"$$$$", end) + 5
    return text[:end]


@functools.cache
def seed_files() -> dict[str, bytes]:
    """Three 2-D solubility records, one 3-D CDK2 ligand, the chiral Molfile and the SMILES file."""
    return {"solubility.sdf": first_records("solubility.train.sdf", 3), "cdk2.sdf": first_records("cdk2.sdf", 1),
            "chiral.mol": realdata("molecules_rdkit", "chiral.mol").read_bytes(),
            "bzr.smi": realdata("molecules_rdkit", "bzr.smi").read_bytes()}


@FUZZ
@given(data=st.data())
@counted
def test_molecules(data):
    files = dict(seed_files())
    name = data.draw(st.sampled_from(sorted(files)), label="file")
    files[name] = data.draw(mutated(files[name]), label="content")
    params = molecules.Params(on_error=data.draw(st.sampled_from(["raise", "quarantine"]), label="on_error"),
                              numeric_tags=data.draw(st.sampled_from([{}, {"SOL": "log10(mol/L)"}]), label="tags"))
    with raw_folder(files) as raw_dir:
        check_reader(lambda: molecules.read(raw_dir, params), raw_dir, files)
