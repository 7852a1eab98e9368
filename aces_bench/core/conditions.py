"""The conditions of a paired study: the headline pair and the calibration arms.

Every condition of one case shares the pairing key (``records.PAIR_KEY``) and the same
staged support skills, decoys, fixtures, instruction and verifier; they differ only in
what is added for the target:

- ``with_skill``: the target (one skill, a bundle or a plugin's skills) is staged.
- ``baseline``: nothing is staged for the target.
- ``null`` (A/A): the baseline task run a second time, as its own trial, and analysed as
  if it were the treatment: its lift over the baseline is the instrument's own.
- ``placebo``: a sham skill with the target's name and description, a body that says
  nothing useful and no scripts or references, staged where the target would be.
- ``forced``: the target staged as in ``with_skill`` and its SKILL.md placed in the
  instruction, so the agent needs not find or trust it (pre-activated).

The calibration arms are chosen with ``study.controls`` (default: none).
"""

from __future__ import annotations

from typing import Literal

Condition = Literal["with_skill", "baseline", "null", "placebo", "forced"]
Control = Literal["null", "placebo", "forced"]

PAIRED = ("with_skill", "baseline")
"""The headline pair: lift is with_skill minus baseline."""
CONTROLS: tuple[str, ...] = Control.__args__  # type: ignore[attr-defined]
ALL_CONDITIONS: tuple[str, ...] = Condition.__args__  # type: ignore[attr-defined]

# What each condition is graded as: graders know two sides, with the target (or a
# stand-in by its name) staged or not. A null trial is a baseline trial; a placebo
# stages a skill under the target's name, so reading it is activating "the target".
GRADED_AS: dict[str, Literal["with_skill", "baseline"]] = {
    "with_skill": "with_skill", "baseline": "baseline", "null": "baseline", "placebo": "with_skill",
    "forced": "with_skill",
}

# Short names in task ids and trial names.
SLUGS = {"with_skill": "skill", "baseline": "base", "null": "null", "placebo": "placebo", "forced": "forced"}


def graded_as(condition: str) -> Literal["with_skill", "baseline"]:
    """The side graders treat ``condition`` as (``with_skill`` or ``baseline``)."""
    return GRADED_AS[condition]


def stages_target(condition: str) -> bool:
    """Whether the task stages the real target skill (with_skill and forced)."""
    return condition in ("with_skill", "forced")
