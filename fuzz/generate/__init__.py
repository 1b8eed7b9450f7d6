"""Stage 1, generate: where programs come from.

Our Hypothesis generator: ``program`` (``programs()``, ``generate(seed)``,
the statement table and the feature vocabulary), ``registry`` (the
``@construct`` decorator: one function per statement kind declares its kind,
weight, features and nesting), ``statements`` and ``constructs_*`` (the
registered kinds), ``writer`` (draws, output lines, bounded expressions),
``scope`` (the names in reach at a point of ``f``) and ``prelude``
(module-level helpers). Other sources: ``mutate`` (corpus statements spliced
into generated programs), ``sources`` (the per-seed mix of generators);
``feedback`` derives statement weights from what found buckets. The stable
public API is ``fuzz.strategies``.
"""
