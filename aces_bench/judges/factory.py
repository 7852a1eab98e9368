"""The one registry of judge kinds: ``build_judge(spec)`` turns a JudgeSpec into a Judge.

Adding a judge is its module (a class with ``label``, ``kind`` and ``async ask(...)``,
the ``judges.base.Judge`` protocol) plus one entry in ``JUDGE_KINDS``; ``JudgeSpec``
and ``judge.kind=`` accept exactly the keys listed here.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from aces_bench.errors import ConfigError
from aces_bench.judges.base import Judge
from aces_bench.judges.spec import JudgeSpec


def _heuristic(spec: JudgeSpec) -> Judge:
    from aces_bench.judges.heuristic import HeuristicJudge

    return HeuristicJudge()


def _litellm(spec: JudgeSpec) -> Judge:
    if not spec.model:
        raise ConfigError(
            "a litellm judge needs a model string",
            where="judge.model",
            fix="set judge.model, e.g. judge.model=openai/gpt-4o-mini (or hosted_vllm/<id> with judge.base_url)",
        )
    if spec.api_key_env and not os.environ.get(spec.api_key_env):
        raise ConfigError(
            f"judge.api_key_env names {spec.api_key_env}, which is not set in the environment",
            where="judge.api_key_env",
            fix=f"export {spec.api_key_env}=<key>; for a keyless local server set it to any dummy value",
        )
    from aces_bench.judges.litellm_judge import LiteLLMJudge

    return LiteLLMJudge(spec)


JUDGE_KINDS: dict[str, Callable[[JudgeSpec], Judge]] = {
    "heuristic": _heuristic,
    "litellm": _litellm,
}


def build_judge(spec: JudgeSpec) -> Judge:
    """The judge a spec describes; an unknown kind or a missing key is a ConfigError."""
    try:
        make = JUDGE_KINDS[spec.kind]
    except KeyError:
        raise ConfigError(
            f"unknown judge kind {spec.kind!r}",
            where="judge.kind",
            fix=f"use one of: {', '.join(sorted(JUDGE_KINDS))}",
        ) from None
    return make(spec)
