"""Agents and harnesses: the harness profiles (``profiles``, ``builtins``: every harness
aces-bench knows, and the facts the graders read), Harbor's installed agent CLIs as
aces-bench runs them (``installed``, ``clis``: npm CLIs provisioned once), which wire API
each speaks (``endpoints``), the deterministic reference agent (``reference``, ``atif``,
``routing``, ``usage``), and what a harness showed its model and spent (``traces``,
``footer``).

May import (pyproject's layers contract): ``cases`` and every layer below it; not its
siblings ``backends`` and ``judges``.
"""
