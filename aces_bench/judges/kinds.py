"""The judge kinds: the one registry ``judge.kind`` names (``JudgeSpec`` checks it, ``build_judge`` reads it).

Each entry builds a Judge from a ``JudgeSpec``. The built-in builders live in
``judges/factory.py`` and are named by import path, so ``JudgeSpec`` can check a kind
without importing the factory or a judge client. A plugin registers its own kind:
``JUDGE_KINDS.register("always-yes", "my_plugin.judge:build")`` (docs/extending.md).
"""

from __future__ import annotations

from aces_bench.core.registry import Registry

JUDGE_KINDS: Registry = Registry("judge kind", where="judge.kind")
JUDGE_KINDS.register("heuristic", "aces_bench.judges.factory:_heuristic")
JUDGE_KINDS.register("litellm", "aces_bench.judges.factory:_litellm")
