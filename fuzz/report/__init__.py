"""Stage 6, report: what a campaign or a case tells a person.

``summary`` (a campaign's summary.json from its database), ``pages`` (its
summary.md and index.html), ``issue`` (a case as a PyTorch issue in
Markdown), ``coverage`` (opcode and line reach).
"""
