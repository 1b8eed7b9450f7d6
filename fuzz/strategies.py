"""Public Hypothesis strategies for tcfuzz programs.

Use them in any test suite::

    from hypothesis import given
    import fuzz.strategies

    @given(fuzz.strategies.programs())
    def test_something(program): ...

The implementation lives in ``fuzz.generate``; this module only re-exports
the stable API, as ``hypothesis.strategies`` does over its ``_internal``.
"""

from fuzz.generate.program import FEATURES, STATEMENT_KINDS, programs

__all__ = ["FEATURES", "STATEMENT_KINDS", "programs"]
