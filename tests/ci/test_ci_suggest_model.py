"""LV2 by a configured model (``aces-bench ci --suggest-model``), against a scripted
OpenAI-compatible server on loopback: the model's revised SKILL.md becomes a diff
labelled with the model; an unusable reply keeps the offline rule's edit, saying so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import litellm  # noqa: F401  imported before the server starts: a slow import must not run into its idle timeout
from support.model_server import ModelServer, Request, Step, message_text, say

from aces_bench.ci.suggest import Lv1Item, Suggestion, lv2
from aces_bench.ci.suggest_model import PROMPT_ID, with_model
from aces_bench.judges.factory import build_judge
from aces_bench.judges.spec import JudgeSpec

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "skills" / "csv-column-sum"
NEW_LINE = "Use it whenever a CSV column must be summed."


def _suggestion(skill_dir: Path) -> Suggestion:
    items = [Lv1Item(metric="skill_execution", check="activation", detail="SKILL.md was never read", step_id=None)]
    diff, note = lv2(skill_dir, "explicit-1", "never activated")
    return Suggestion(skill="csv-column-sum", case_id="explicit-1", why="failed", lv1=items,
                      failure_class="never activated", lv2_diff=diff, lv2_produced_by="offline rule: never activated",
                      lv2_note=note)


def _edit(request: Request) -> Step:
    user = next(message_text(m) for m in request.body["messages"] if m["role"] == "user")
    assert '"check": "activation"' in user  # the LV1 evidence reached the model
    skill_md = user.split("SKILL.md:\n", 1)[1]
    return say(json.dumps({"reason": "state the trigger plainly",
                           "skill_md": skill_md.rstrip("\n") + f"\n\n{NEW_LINE}\n"}))


def test_model_lv2_is_a_diff_labelled_with_the_model(tmp_path, monkeypatch):
    skill = tmp_path / "csv-column-sum"
    shutil.copytree(FIXTURE, skill, ignore=shutil.ignore_patterns("__pycache__"))
    with ModelServer(_edit, max_requests=4, idle_timeout=300) as server:
        judge = build_judge(JudgeSpec(kind="litellm", model="openai/test-model", base_url=server.base_url))
        [s] = with_model(judge, [_suggestion(skill)], {"csv-column-sum": skill})
    assert server.errors == []
    assert s.lv2_produced_by.startswith("model: ") and f"prompt {PROMPT_ID} v1" in s.lv2_produced_by
    assert f"+{NEW_LINE}" in s.lv2_diff and s.lv2_diff.startswith("--- a/SKILL.md")
    assert s.lv2_note == "state the trigger plainly"


def test_an_unusable_model_reply_keeps_the_offline_rule(tmp_path):
    skill = tmp_path / "csv-column-sum"
    shutil.copytree(FIXTURE, skill, ignore=shutil.ignore_patterns("__pycache__"))
    with ModelServer(lambda request: say("I would rather not."), max_requests=20, idle_timeout=300) as server:
        judge = build_judge(JudgeSpec(kind="litellm", model="openai/test-model", base_url=server.base_url,
                                      max_retries=0))
        before = _suggestion(skill)
        [s] = with_model(judge, [before], {"csv-column-sum": skill})
    assert s.lv2_produced_by == "offline rule: never activated" and s.lv2_diff == before.lv2_diff
    assert s.lv2_note.startswith("offline rule used: the model (") and "gave no usable edit" in s.lv2_note
