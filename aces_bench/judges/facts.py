"""The deterministic facts every judge is shown about one trial: the judges' input contract.

The graders compute them (``aces_bench.graders.judge_context.build_facts``, from the same
trace view the deterministic graders read) and put them in the ``facts`` section of each
judged prompt (``aces_bench.judges.prompts``); the heuristic judge decides from them
alone. They live here, below the graders, so a judge reads them without importing a grader.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from aces_bench.cases import Check


class Activation(BaseModel):
    model_config = ConfigDict(frozen=True)

    skill: str
    step: int
    how: str


class ScriptRun(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int
    ok: bool
    detail: str


class Facts(BaseModel):
    """Deterministic facts about a trial, shown to every judge (and all the heuristic reads)."""

    model_config = ConfigDict(frozen=True)

    condition: str
    expected_skill: str | None
    acceptable_skills: list[str]
    expected_script: str | None
    expected_output: str | None
    checks: list[Check]
    activations: list[Activation]
    script_runs: list[ScriptRun]
    tool_calls: int
    final_answer_source: str
