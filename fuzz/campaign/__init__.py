"""Stage 2, schedule and execute: a campaign over interpreter workers.

``config`` and ``loop`` (the campaign), ``workers`` (the worker pool and its
protocol client), ``interpreters`` and ``torch_envs`` (where the workers run),
``database`` (campaign state in SQLite) and ``merge`` (shards into one).
"""
