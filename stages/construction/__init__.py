"""Construction: from catalog tasks to the built benchmark (`flows/construct.py` runs these steps).

`drawing` extracts a task's tables and draws its scoped queries, `prompts` renders what an agent
reads, `staging` writes each query's public and private files, `annotate` labels and verifies gold
answers with the annotator scripts, `splits` drops near-duplicates and splits the pool, `benchmark`
writes the benchmark's files; `scopes` resolves the named slices of a domain.
"""
