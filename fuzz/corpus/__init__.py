"""Stage 5, corpus: minimised cases as standalone PEP 723 scripts.

``render`` (a case's text: program, table, runner), ``store`` (reading,
writing and listing cases, replaying them standalone).
"""
