"""TIFF container checks that GDAL does not make: magic bytes, truncation, and the GDAL_NODATA text.

GDAL reads an unparsable ``GDAL_NODATA`` tag (``"abc"``) as 0 and a ``"nan"`` tag on an integer
band as no nodata at all, and it opens a file whose pixel blocks are cut off, failing only when
those blocks are read. Walking the image file directories (IFDs) with plain ``struct`` reads finds
these problems up front, without reading pixel data. Classic TIFF and BigTIFF, both byte orders
(TIFF 6.0, Adobe 1992; BigTIFF, libtiff.org/bigtiff).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from stages.tables import RawFormatError

MAGIC = {b"II*\x00": ("<", False), b"MM\x00*": (">", False),
         b"II+\x00": ("<", True), b"MM\x00+": (">", True)}
TYPE_FORMATS = {1: "B", 2: "s", 3: "H", 4: "I", 6: "b", 7: "B", 8: "h", 9: "i", 11: "f", 12: "d",
                13: "I", 16: "Q", 17: "q", 18: "Q"}
BLOCK_TAGS = ((273, 279), (324, 325))  # (StripOffsets, StripByteCounts), (TileOffsets, TileByteCounts)
DATETIME_TAG = 306
GDAL_NODATA_TAG = 42113
MAX_DIRECTORIES = 4096


@dataclass(frozen=True)
class TiffLayout:
    """What the container says: tag codes per directory, the GDAL_NODATA text, the file size."""

    directories: tuple[frozenset[int], ...]
    nodata_text: str | None
    size: int


def check_tiff(path: Path) -> TiffLayout:
    """Walk every IFD of a TIFF; raise RawFormatError (record None) on a non-TIFF or cut-off file."""
    size = path.stat().st_size
    if size == 0:
        raise RawFormatError(path, None, "file is empty")
    with path.open("rb") as handle:
        head = handle.read(16)
        if head[:4] not in MAGIC:
            raise RawFormatError(path, None, f"not a TIFF file (starts with {head[:8]!r})")
        order, big = MAGIC[head[:4]]
        if len(head) < (16 if big else 8):
            raise RawFormatError(path, None, f"file is truncated: {size} bytes end inside the header")
        offset = struct.unpack(order + ("Q" if big else "I"), head[8:16] if big else head[4:8])[0]
        directories, nodata_text, seen = [], None, set()
        while offset and len(directories) < MAX_DIRECTORIES and offset not in seen:
            seen.add(offset)
            tags, offset = _read_directory(path, handle, order, big, offset, size)
            _check_blocks(path, tags, size, len(directories))
            if not directories and GDAL_NODATA_TAG in tags:
                nodata_text = _nodata_text(path, tags[GDAL_NODATA_TAG])
            directories.append(frozenset(tags))
    if not directories:
        raise RawFormatError(path, None, "TIFF has no image directory")
    return TiffLayout(tuple(directories), nodata_text, size)


def parse_nodata_text(path: Path, text: str | None) -> float | None:
    """The number a GDAL_NODATA tag holds (NaN allowed), or None without the tag."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise RawFormatError(path, None, f"GDAL_NODATA tag {text!r} is not a number") from None


def _read_directory(path: Path, handle: BinaryIO, order: str, big: bool, offset: int,
                    size: int) -> tuple[dict[int, object], int]:
    """Entries of one IFD: tag -> values (bytes for ASCII, tuple otherwise), and the next offset."""
    count_format, entry_size, pointer = ("Q", 20, "Q") if big else ("H", 12, "I")
    count_size = struct.calcsize(count_format)
    raw = b""
    if offset + count_size <= size:  # a BigTIFF offset may be past what the OS can seek to
        handle.seek(offset)
        raw = handle.read(count_size)
    if len(raw) < count_size:
        raise RawFormatError(path, None, f"file is truncated: image directory at byte {offset} is "
                             f"past the end of the file ({size} bytes)")
    count = struct.unpack(order + count_format, raw)[0]
    body = handle.read(count * entry_size + struct.calcsize(pointer))
    if len(body) < count * entry_size + struct.calcsize(pointer):
        raise RawFormatError(path, None, f"file is truncated: image directory at byte {offset} "
                             f"runs past the end of the file ({size} bytes)")
    tags: dict[int, object] = {}
    inline = 8 if big else 4
    for index in range(count):
        entry = body[index * entry_size:(index + 1) * entry_size]
        tag, kind = struct.unpack(order + "HH", entry[:4])
        n = struct.unpack(order + ("Q" if big else "I"), entry[4:4 + inline])[0]
        wanted = tag in (GDAL_NODATA_TAG, *(t for pair in BLOCK_TAGS for t in pair))
        if kind not in TYPE_FORMATS or not wanted:
            tags[tag] = None
            continue
        item = struct.calcsize(TYPE_FORMATS[kind]) if kind != 2 else 1
        data = entry[4 + inline:]
        if n * item > inline:
            at = struct.unpack(order + pointer, data)[0]
            if at + n * item > size:
                raise RawFormatError(path, None, f"file is truncated: tag {tag} values at byte {at} "
                                     f"run past the end of the file ({size} bytes)")
            handle.seek(at)
            data = handle.read(n * item)
        tags[tag] = data[:n] if kind == 2 else struct.unpack(f"{order}{n}{TYPE_FORMATS[kind]}",
                                                             data[:n * item])
    next_offset = struct.unpack(order + pointer, body[count * entry_size:])[0]
    return tags, next_offset


def _nodata_text(path: Path, value: object) -> str:
    """The text of a GDAL_NODATA entry, which GDAL writes as ASCII."""
    if not isinstance(value, bytes):
        raise RawFormatError(path, None, "GDAL_NODATA tag is not of the ASCII type")
    return value.decode("latin-1").rstrip("\x00").strip()


def _check_blocks(path: Path, tags: dict[int, object], size: int, directory: int) -> None:
    """Every strip or tile of the directory must lie inside the file (empty sparse blocks allowed)."""
    for offsets_tag, counts_tag in BLOCK_TAGS:
        offsets, counts = tags.get(offsets_tag), tags.get(counts_tag)
        if offsets is None or counts is None:
            continue
        if not all(isinstance(values, tuple) and all(isinstance(v, int) and v >= 0 for v in values)
                   for values in (offsets, counts)):
            raise RawFormatError(path, None, f"image directory {directory}: block offsets and sizes "
                                 "must be non-negative integers")
        if len(offsets) != len(counts):
            raise RawFormatError(path, None, f"image directory {directory} lists {len(offsets)} block "
                                 f"offsets but {len(counts)} block sizes")
        ends = np.asarray(offsets, dtype=np.uint64) + np.asarray(counts, dtype=np.uint64)
        beyond = (np.asarray(counts) > 0) & (ends > size)
        if beyond.any():
            block = int(np.argmax(beyond))
            raise RawFormatError(path, None, f"file is truncated: block {block} of image directory "
                                 f"{directory} ends at byte {ends[block]} but the file has {size} bytes")
