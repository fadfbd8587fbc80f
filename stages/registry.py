"""Registries of modules by name, each imported on first use.

A stage that reads CAMELS text should not pay for importing RDKit, GDAL and HDF5 at start-up; a
registry lists every module but imports only the one asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType


class LazyModules(Mapping):
    """`name -> module` for the modules `<package>.<name>`, imported when first looked up."""

    def __init__(self, package: str, names: list[str]):
        self.package = package
        self.names = list(names)

    def __getitem__(self, name: str) -> ModuleType:
        if name not in self.names:
            raise KeyError(name)
        return importlib.import_module(f"{self.package}.{name}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)
