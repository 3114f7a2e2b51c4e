"""The experiment harness: ideas tried on replicas of `recall`'s ranking before any is built.

It is not part of the product: the Lambda layer and the wheel carry `functions/shared/xmemo`
only, and the benchmarks a user runs stay under `xmemo bench`. `python -m research` lists the
experiments; `python -m research NAME --help` runs one. What each one found is in
docs/research/README.md (the research log)."""
