"""``build_judge(spec)`` turns a JudgeSpec into a Judge through the judge-kind registry.

Adding a judge is its module (a class with ``label``, ``kind`` and ``async ask(...)``,
the ``judges.base.Judge`` protocol) plus one ``JUDGE_KINDS.register(name, builder)``
(``judges/kinds.py``, or a plugin: docs/extending.md); ``JudgeSpec`` and ``judge.kind=``
accept exactly the registered names.
"""

from __future__ import annotations

import os

from aces_bench.core.errors import ConfigError
from aces_bench.judges.base import Judge
from aces_bench.judges.kinds import JUDGE_KINDS
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




class JudgePanel:
    """Several judges that each grade every judged metric (``judge.models=[...]``).

    The grading layer asks every member and aggregates per metric
    (``graders.judged.grade_panel``). Where one answer is needed (a dataset draft, a
    trigger routing call), ``ask`` is the first member's.
    """

    def __init__(self, members: list[Judge], aggregate: str):
        labels: list[str] = []
        for j in members:  # two members of one label (one model, two endpoints) stay apart
            labels.append(j.label if j.label not in labels else f"{j.label}#{len(labels) + 1}")
        self.members = members
        self.labels = labels
        self.aggregate = aggregate
        self.kind = "llm" if any(j.kind == "llm" for j in members) else "heuristic"
        self.label = f"panel of {len(members)} ({aggregate}): {', '.join(labels)}"

    async def ask(self, **kwargs):
        return await self.members[0].ask(**kwargs)


def build_judge(spec: JudgeSpec) -> Judge:
    """The judge a spec describes (a ``JudgePanel`` with ``models``); an unknown kind or a missing key is a
    ConfigError."""
    if spec.models:
        if len(spec.models) < 2:
            raise ConfigError("a judge panel needs at least two judges", where="judge.models",
                              fix="list two or more (e.g. judge.models=[openai/gpt-4o-mini,anthropic/claude-3-5-haiku]),"
                                  " or set judge.model for one judge")
        return JudgePanel([build_judge(m) for m in spec.members()], spec.aggregate)
    return JUDGE_KINDS.get(spec.kind)(spec)
