"""Stage 3, signature and triage: what a finding is and where it shows.

``signature`` (bucket keys from outcomes), ``language`` (the language features
of a minimised program, for divergence keys), ``matrix`` (the interpreter x
backend x torch table of one case), ``diff`` (two campaigns compared) and
``compiler_bisect`` (the Inductor subsystem torch's CompilerBisector blames).
"""
