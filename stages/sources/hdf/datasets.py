"""Generic HDF5 access for the `hdf` source: sniff, open, walk every link, read numeric datasets.

Every problem becomes a `RawFormatError` naming the file and, in the problem, the HDF5 path of the
group or dataset (HDF5 has no lines, so `line` is None).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import h5py
import numpy as np

from stages.tables import RawFormatError

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
NETCDF3_SIGNATURES = (b"CDF\x01", b"CDF\x02", b"CDF\x05")
NUMERIC_KINDS = "iuf"
ENCODING_NAMES = {"ascii": "ASCII", "utf-8": "UTF-8"}


@dataclass(frozen=True)
class DatasetInfo:
    """One dataset of a file: HDF5 path (leading `/`), shape, dtype, attributes as JSON, unit."""

    dataset: str
    shape: tuple[int, ...]
    dtype: str
    attributes: str
    unit: str | None
    numeric: bool
    has_scales: bool  # dimension scales are attached (a DIMENSION_LIST attribute): maybe a grid


def sniff(path: Path) -> Literal["hdf5", "netcdf3"]:
    """Tell an HDF5 (incl. NetCDF-4) file from a classic NetCDF file; anything else is an error.

    The HDF5 superblock may sit behind a user block, at byte 0, 512, 1024, 2048, ...
    """
    size = path.stat().st_size
    if size == 0:
        raise RawFormatError(path, None, "file is empty")
    with path.open("rb") as handle:
        head = handle.read(8)
        if head[:4] in NETCDF3_SIGNATURES:
            return "netcdf3"
        offset = 0
        while offset + 8 <= size:
            handle.seek(offset)
            if handle.read(8) == HDF5_SIGNATURE:
                return "hdf5"
            offset = 512 if offset == 0 else offset * 2
    raise RawFormatError(path, None, f"not an HDF5 or NetCDF file (no signature; starts with {head!r})")


@contextmanager
def reading(path: Path, where: str) -> Iterator[None]:
    """Turn a library error while reading `where` (an HDF5 path) into a RawFormatError."""
    try:
        yield
    except RawFormatError:
        raise
    except (OSError, KeyError, RuntimeError, ValueError, TypeError) as error:
        raise RawFormatError(path, None, f"{where}: unreadable ({error})") from error


def open_hdf5(path: Path) -> h5py.File:
    """Open an HDF5 file read-only; a truncated or corrupt file raises a RawFormatError."""
    try:
        return h5py.File(path, "r")
    except OSError as error:
        raise RawFormatError(path, None, f"unreadable HDF5 file ({error})") from error


def resolve(path: Path, group: h5py.Group, name: str) -> h5py.Group | h5py.Dataset:
    """The object linked as `name` in `group`, or an error naming the group path and the link."""
    where = f"{group.name.rstrip('/')}/{name}"
    link = group.get(name, getlink=True)
    if link is None:
        raise RawFormatError(path, None, f"group {group.name}: missing required member {name!r}")
    try:
        return group[name]
    except (KeyError, OSError) as error:
        if isinstance(link, h5py.SoftLink):
            problem = f"{where} is a dangling soft link to {link.path!r}"
        elif isinstance(link, h5py.ExternalLink):
            problem = f"{where} is an external link to {link.filename}:{link.path} that cannot be opened"
        else:
            problem = f"{where} cannot be opened ({error})"
        raise RawFormatError(path, None, f"group {group.name}: {problem}") from error


def list_datasets(path: Path, h5: h5py.File) -> list[DatasetInfo]:
    """Every dataset reachable by a link, sorted by path; every link must resolve."""
    names: list[str] = []
    with reading(path, "/"):
        h5.visit_links(names.append)
    infos = []
    for name in sorted(names):
        parent, _, leaf = name.rpartition("/")
        node = resolve(path, h5[parent] if parent else h5, leaf)
        if isinstance(node, h5py.Dataset):
            with reading(path, "/" + name):
                infos.append(_info("/" + name, node))
    return infos


def read_numeric(path: Path, h5: h5py.File, info: DatasetInfo) -> np.ndarray:
    """A numeric dataset as float64; values equal to its `_FillValue` / `missing_value` are NaN."""
    dataset = h5[info.dataset]
    with reading(path, info.dataset):
        values = dataset[()]
        out = np.asarray(values, dtype=np.float64)
        for key in ("_FillValue", "missing_value"):
            if key in dataset.attrs:
                out[np.isin(values, np.asarray(dataset.attrs[key], dtype=values.dtype).ravel())] = np.nan
    if np.isinf(out).any():
        index = tuple(int(i) for i in np.argwhere(np.isinf(out))[0])
        raise RawFormatError(path, None, f"{info.dataset}: infinite value at index {index}")
    return out


def decode_strings(path: Path, dataset: h5py.Dataset, encoding: Literal["ascii", "utf-8"] = "ascii") -> np.ndarray:
    """A 1-D string dataset (fixed-length bytes or variable-length) decoded as ASCII (10x) or UTF-8 (AnnData)."""
    with reading(path, dataset.name):
        values = dataset[()]
    if values.ndim != 1 or values.dtype.kind not in "SO":
        raise RawFormatError(path, None, f"{dataset.name}: expected a 1-D array of strings, found "
                             f"shape {values.shape} dtype {values.dtype}")
    try:
        if values.dtype.kind == "S":
            return np.char.decode(values, encoding).astype(object)
        return np.array([v.decode(encoding) if isinstance(v, bytes) else str(v) for v in values], object)
    except UnicodeDecodeError as error:
        position = next(i for i, v in enumerate(values) if not _decodes(bytes(v), encoding))
        raise RawFormatError(path, None, f"{dataset.name}: entry {position} is not "
                             f"{ENCODING_NAMES[encoding]}") from error


def text_attribute(node: h5py.Group | h5py.Dataset, key: str) -> str | None:
    """The attribute `key` of a group or dataset as text; None when absent or not one string."""
    try:
        value = node.attrs.get(key)
    except (OSError, TypeError, ValueError, KeyError):
        return None
    value = value.decode("ascii", errors="replace") if isinstance(value, bytes | np.bytes_) else value
    return value if isinstance(value, str) else None


def _decodes(value: bytes, encoding: str) -> bool:
    try:
        value.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def _info(name: str, dataset: h5py.Dataset) -> DatasetInfo:
    attributes = {key: _attribute(dataset, key) for key in sorted(dataset.attrs)}
    unit = attributes.get("units")
    return DatasetInfo(
        dataset=name, shape=tuple(int(n) for n in dataset.shape), dtype=_dtype_name(dataset.dtype),
        attributes=json.dumps(attributes, sort_keys=True), unit=unit if isinstance(unit, str) else None,
        numeric=dataset.dtype.kind in NUMERIC_KINDS, has_scales="DIMENSION_LIST" in attributes,
    )


def _attribute(dataset: h5py.Dataset, key: str) -> object:
    try:
        return _jsonable(dataset.attrs[key], dataset.file)
    except (OSError, TypeError, ValueError) as error:  # e.g. an attribute type h5py cannot map
        return f"<unreadable attribute: {error}>"


def _dtype_name(dtype: np.dtype) -> str:
    info = h5py.check_string_dtype(dtype)
    if info is not None and info.length is None:
        return f"vlen-str[{info.encoding}]"
    return dtype.str.lstrip("|") if dtype.kind == "S" else str(dtype)


def _jsonable(value: object, h5: h5py.File) -> object:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        return [_jsonable(item, h5) for item in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_jsonable(item, h5) for item in value]
    if isinstance(value, np.generic):
        return _jsonable(value.item(), h5)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, h5py.Reference) and value:
        try:
            return f"<reference to {h5[value].name}>"  # e.g. the dimension scales of DIMENSION_LIST
        except (KeyError, OSError, ValueError):
            return "<dangling reference>"
    return str(value)  # region references, compound records, h5py.Empty
