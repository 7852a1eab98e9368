"""Baseline contamination: did a baseline trial see the skill it is the baseline for?

A baseline is only a baseline if the target skill was out of reach. Images that bake
skills into an agent's home (``~/.gemini/skills``, ``~/.claude/skills``) or a shared
skills folder can hand it back. Read from the trace, by name or by content:

- by name: an activation of the target (a read of its SKILL.md in any skills folder
  the graders recognise, or a harness activation call naming it);
- by content: a tool output that contains a distinctive passage of the target's
  SKILL.md body (a copy under another name, a ``cat`` through a glob).

Only what the agent was shown counts: a read or activation call of the target that
failed (a ``cat /skills/<target>/SKILL.md`` answering "No such file or directory", an
activation refused, a read with no output) is an attempt, not contamination; the pair
is kept and the attempt recorded apart (``target_attempts``, a note on the trial).

A contaminated baseline is excluded from its pair (its outcome is unscored with the
reason ``BASELINE_SAW_TARGET``) and counted in the report.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.graders.skill_execution import Activation, activations, norm_skill
from aces_bench.graders.tool_calls import TraceView

BASELINE_SAW_TARGET = "baseline saw the target skill"
_PASSAGE = 120  # characters of SKILL.md body that, found verbatim in an output, mean the skill was read


def skill_passages(skill_dir: Path | None) -> list[str]:
    """Distinctive passages of a skill's SKILL.md body (after the frontmatter), whitespace-folded."""
    if skill_dir is None:
        return []
    try:
        text = (Path(skill_dir) / "SKILL.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if text.startswith("---"):
        end = text.find("\n---", 3)
        text = text[end + 4:] if end != -1 else ""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return [line[:_PASSAGE] for line in lines if len(line) >= 60][:5]


def target_attempts(view: TraceView | None, *, target: str, skills_dir: str) -> list[str]:
    """The trace's failed attempts to read or activate the target, described (not contamination)."""
    if view is None:
        return []
    tried: list[Activation] = []
    activations(view.calls, skills_dir, tried, require_output=True)
    want = norm_skill(target)
    return [f"{a.how} at step {a.call.step_id} {a.failed}" for a in tried if norm_skill(a.skill) == want]


def saw_target(view: TraceView | None, *, target: str, skills_dir: str, passages: list[str]) -> str | None:
    """Why the trace shows the target skill was seen (first evidence), or None.

    A read or activation counts only when it succeeded and showed text (exit status and
    output checked); failed attempts are ``target_attempts``.
    """
    if view is None:
        return None
    want = norm_skill(target)
    for a in activations(view.calls, skills_dir, require_output=True):
        if norm_skill(a.skill) == want:
            return f"{BASELINE_SAW_TARGET}: {a.how} at step {a.call.step_id}"
    for c in view.calls:
        output = " ".join((c.output or "").split())
        for p in passages:
            if p in output:
                return f"{BASELINE_SAW_TARGET}: step {c.step_id} output contains its SKILL.md text"
    return None
