"""Stage 1, generate: where programs come from.

``writer`` and ``constructs`` (our Hypothesis generator), ``mutate`` (corpus
statements spliced into generated programs), ``sources`` (the per-seed mix of
generators) and ``feedback`` (statement weights from what found buckets).
The stable public API is ``fuzz.strategies``.
"""
