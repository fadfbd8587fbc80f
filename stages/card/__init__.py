"""The release of a built benchmark and its documentation (DVC stage `card`).

`processed/release/` is what a publisher uploads: the public part of the build and nothing else
(queries.parquet and each query's workspace files), with `croissant.json` (Croissant 1.0 + RAI) and
`DATASHEET.md` (Gebru et al.'s datasheet questions) written from the build's own figures.
"""
