"""LV2 by the configured model: the model returns a revised SKILL.md for one failing
case (given the skill text and the LV1 evidence); the diff is computed here, so it
always applies. A reply that is unusable or changes nothing keeps the offline rule's
suggestion, and the note says why."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from aces_bench.ci.suggest import Suggestion, _diff
from aces_bench.inputs.skills import SKILL_FILE, read_text_file
from aces_bench.judges.base import Judge

PROMPT_ID = "ci.lv2"
PROMPT_VERSION = "1"
MAX_SKILL_CHARS = 20_000

SYSTEM = """You improve an agent skill so that a failing evaluation case passes next time.
You get the skill's SKILL.md and the checks that failed in the agent's run (LV1 evidence,
with trajectory step ids). Change only what the evidence calls for: the description and
trigger wording when the skill was never activated, a usage example when a script got wrong
arguments, an ordered checklist when a step was skipped. Keep the frontmatter keys and
everything else as it is. Reply with JSON: {"reason": "...", "skill_md": "<the complete revised SKILL.md>"}."""


class ProposedEdit(BaseModel):
    reason: str = Field(min_length=1)
    skill_md: str = Field(min_length=1)


def prompt(skill_md: str, s: Suggestion) -> str:
    evidence = [{"metric": i.metric, "check": i.check, "step_id": i.step_id, "detail": i.detail} for i in s.lv1]
    return (f"Skill: {s.skill}\nCase: {s.case_id} ({s.why}; class: {s.failure_class or 'unclassified'})\n"
            f"LV1 evidence:\n{json.dumps(evidence, indent=1)}\n\nSKILL.md:\n{skill_md[:MAX_SKILL_CHARS]}")


async def _one(judge: Judge, skill_dir: Path, s: Suggestion) -> Suggestion:
    path = skill_dir / SKILL_FILE
    text = read_text_file(path)  # capped, never blocks on a pipe planted in its place
    outcome = await judge.ask(prompt_id=PROMPT_ID, prompt_version=PROMPT_VERSION, system=SYSTEM,
                              user=prompt(text, s), schema=ProposedEdit)
    fallback = f"offline rule used: the model ({outcome.judge}) "
    if outcome.value is None:
        return s.model_copy(update={"lv2_note": fallback + f"gave no usable edit ({outcome.error})"})
    after = outcome.value.skill_md if outcome.value.skill_md.endswith("\n") else outcome.value.skill_md + "\n"
    if after == text:
        return s.model_copy(update={"lv2_note": fallback + "proposed no change"})
    return s.model_copy(update={"lv2_diff": _diff(path, text, after), "lv2_note": outcome.value.reason,
                                "lv2_produced_by": f"model: {outcome.judge} (prompt {PROMPT_ID} v{PROMPT_VERSION})"})


def with_model(judge: Judge, suggestions: Sequence[Suggestion], paths: dict[str, Path]) -> list[Suggestion]:
    """Each suggestion's LV2 from the model (falling back to the offline rule, labelled)."""
    async def run() -> list[Suggestion]:
        return list(await asyncio.gather(*(_one(judge, paths[s.skill], s) for s in suggestions)))

    return asyncio.run(run()) if suggestions else []
