"""The placebo arm's sham skill and the forced arm's pre-activated instruction.

A sham has the target's name and description (so routing, discovery and activation see
the same skill card) and a body that teaches nothing: no steps, no commands, no
scripts, no references. Lift over the placebo therefore separates "a skill by this name
is present" from what the skill's content adds.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import yaml

from aces_bench.inputs.skills import SKILL_FILE, Skill

PLACEBO_BODY = "This skill has no further content.\n"


def placebo_skill_md(target: Skill) -> bytes:
    """SKILL.md of the sham: the target's name and description, an empty-handed body."""
    return _sham_md(target.name, target.description)


@lru_cache(maxsize=4096)  # every sweep member and task asks again for the same skill
def _sham_md(name: str, description: str) -> bytes:
    front = yaml.safe_dump({"name": name, "description": description}, sort_keys=False,
                           allow_unicode=True, width=10_000)
    return f"---\n{front}---\n\n# {name}\n\n{PLACEBO_BODY}".encode()


def placebo_files(target: Skill) -> tuple[tuple[str, bytes], ...]:
    """The sham folder's files (relative path, bytes): SKILL.md only."""
    return ((SKILL_FILE, placebo_skill_md(target)),)


def placebo_skill(target: Skill) -> Skill:
    """The sham as a ``Skill`` (its ``path`` is the target's folder, which it is never read from;
    its ``content_hash`` covers the generated files as ``skills.hash_tree`` would)."""
    data = placebo_skill_md(target)
    h = hashlib.sha256()
    for rel, blob in placebo_files(target):
        h.update(rel.encode() + b"\0" + blob + b"\0")
    return Skill(name=target.name, description=target.description, path=target.path, version=None,
                 frontmatter={"name": target.name, "description": target.description},
                 body=data.decode().split("---\n", 2)[2], content_hash=h.hexdigest())


def forced_preamble(target: Skill, skill_md: str, skills_dir: str) -> str:
    """The block the forced arm puts before the case prompt: the target's SKILL.md, pre-activated.

    The SKILL.md is fenced so that its own ``---`` frontmatter lines are never taken for
    the instruction's footer separator.
    """
    folder = f"{skills_dir.rstrip('/')}/{target.name}"
    fence = "````"
    while fence in skill_md:
        fence += "`"
    return (f"The skill `{target.name}` is already activated for this task: its SKILL.md follows, and its "
            f"files (scripts, references) are in {folder}/.\n\n{fence}markdown\n{skill_md.rstrip()}\n{fence}\n\n")
