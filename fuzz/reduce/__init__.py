"""Stage 4, minimise: reduce a finding's program, keeping its signature.

``pipeline`` (the signature check and the order of passes), ``shrink``
(Hypothesis' shrinker over the generator's choices).
"""
