"""Stage 5, corpus: minimised cases as standalone PEP 723 scripts.

``render`` (a case's text: program, table, runner), ``store`` (reading,
writing and listing cases, replaying them standalone), ``filing`` (a finding
minimised, confirmed standalone and filed with its replay).
"""
