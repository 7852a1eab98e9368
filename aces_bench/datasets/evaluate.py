"""``aces-bench eval PATH [PATH...] [overrides...]``: a skill author's one command.

It turns folders into the study's Hydra overrides and hands them to the study app:
each PATH is a skill folder, a folder of skills or a plugin (a folder holding
``.claude-plugin/plugin.json``); ``group=option`` / ``key=value`` arguments after the
paths are the study's usual overrides. A skill that has no evaluation case gets drafts
from ``dataset create`` (this package's own code), written into a copy of the skill
under ``<output>/drafts/<name>/`` so the author's folder is left as it was
(``--write-drafts`` writes them into the skill folder instead, as ``dataset create``
does). Drafts are unreviewed: the study runs them (``skill.accept_drafts=true``) and
says that the verdict rests on them.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from aces_bench.cases.formats import has_eval_assets, load_suite
from aces_bench.core.errors import AcesError, ConfigError, SkillError
from aces_bench.emitters.interventions import PLUGIN_MANIFEST, plugin_name
from aces_bench.inputs.skills import discover_skill_dirs, load_skill
from aces_bench.inputs.skilltree import copy_tree

USAGE = "aces-bench eval PATH [PATH...] [--write-drafts] [group=option ...] [group.key=value ...]"
# Hydra flags that take a value: the value is not a PATH.
_VALUED_FLAGS = ("--cfg", "-c", "--package", "-p", "--info", "--config-name", "-cn", "--config-path", "-cp")
_OWN_KEYS = ("skill", "skill.paths", "skill.intervention")
DRAFTS = "drafts"
HELP = f"""usage: {USAGE}

Evaluate skills in one command: a paired with/without-skill study of each skill (a skill
folder, a folder of skills, or a plugin holding {PLUGIN_MANIFEST}), ending with the
verdict table. The study's overrides follow the paths (harness=codex model=gpt-4o
study.n_attempts=3 ...); the default is offline: reference agent, local bubblewrap
sandbox, heuristic judge. A skill without evaluation cases gets drafted ones, written
into a copy under <output>/drafts/<skill>/ (--write-drafts: into the skill folder, as
'aces-bench dataset create' does); a verdict resting on unreviewed drafts says so.
Output: outputs/eval-<skill>/ (study.name=... names it). Exit 0 with a verdict,
1 when trials failed, 2 on bad input, 3 when a skill got no verdict."""


@dataclass
class EvalArgs:
    paths: list[Path] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    write_drafts: bool = False


@dataclass
class EvalPlan:
    """What ``eval`` will run: the Hydra argv, and the lines it prints first."""

    argv: list[str]
    notes: list[str]
    """what was drafted, printed before the study"""
    closing: list[str]
    """that a verdict rests on unreviewed drafts, printed after the verdict table"""
    drafted: dict[str, int]
    """skill name -> unreviewed drafted cases the verdict rests on"""
    where: dict[str, Path] = field(default_factory=dict)
    """skill name -> the evals file holding its drafts"""


def parse_eval_args(args: list[str]) -> EvalArgs:
    """PATHs, then overrides (``key=value``) and flags; a word that is neither is refused."""
    out = EvalArgs()
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--write-drafts":
            out.write_drafts = True
        elif a in _VALUED_FLAGS and i + 1 < len(args):
            out.flags += [a, args[i + 1]]
            i += 1
        elif a.startswith("-"):
            out.flags.append(a)
        elif "=" in a or a.startswith("~"):
            out.overrides.append(a)
        else:
            path = Path(a)
            if not path.exists():
                raise SkillError("no such folder", where=a,
                                 fix=f"give skill folders, folders of skills or plugins: {USAGE}")
            out.paths.append(path)
        i += 1
    if not out.paths:
        raise SkillError("no skill folder given", where="aces-bench eval",
                         fix=f"name at least one: {USAGE}")
    for o in out.overrides:
        key = o.lstrip("+~").split("=", 1)[0]
        if key in _OWN_KEYS:
            raise ConfigError(f"'{key}' is set by eval from its PATHs", where=o,
                              fix="drop it, or run the study app: aces-bench skill=custom 'skill.paths=[...]'")
    return out


def is_plugin(path: Path) -> bool:
    return (Path(path) / PLUGIN_MANIFEST).is_file()


def _override(overrides: list[str], key: str) -> str | None:
    for o in reversed(overrides):
        k, _, v = o.lstrip("+").partition("=")
        if k == key:
            return v
    return None


def output_dir(overrides: list[str], study_name: str) -> Path:
    """Where the study writes: ``hydra.run.dir`` when given, else ``outputs/<study.name>``."""
    run_dir = _override(overrides, "hydra.run.dir")
    return Path(run_dir) if run_dir else Path("outputs") / study_name


def _study_name(names: list[str]) -> str:
    head = re.sub(r"[^A-Za-z0-9_.-]", "_", names[0]) if names else "skills"
    return f"eval-{head}" if len(names) == 1 else f"eval-{head}-and-{len(names) - 1}-more"


def _skill_dirs(path: Path) -> list[Path]:
    """The skill folders a PATH holds (a plugin's are under ``skills/`` or at its root)."""
    if is_plugin(path):
        return discover_skill_dirs(path / "skills" if (path / "skills").is_dir() else path)
    return discover_skill_dirs(path)


def _draft(skill_dir: Path, copy_root: Path | None, notes: list[str]) -> tuple[Path, int]:
    """Draft cases for one skill without any; return where they are and how many."""
    from aces_bench.datasets.create import create_dataset

    skill = load_skill(skill_dir)
    report = create_dataset(skill_dir)
    n = len(report.suite.evals) if report.suite is not None else 0
    if n == 0:
        raise AcesError("no evaluation cases, and none could be drafted", where=skill_dir,
                        fix="add evals/evals.json with {skill_name, evals: [{id, prompt, assertions}]}")
    notes.append(f"{skill.name}: {n} drafted case(s) in {report.path}" + ("" if copy_root is None else
                                                                      " (a copy; your folder is unchanged)"))
    return report.path, n


def _copy(src: Path, dest: Path) -> Path:
    """A fresh copy of a skill or plugin folder through the one walk over untrusted folders
    (``skilltree.copy_tree``): regular files only, so a pipe, device, link out or link loop
    is a one-line error, never a hang or a host file copied."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    copy_tree(Path(os.path.realpath(src)), dest)
    return dest


def _prepare_path(path: Path, out: Path, write_drafts: bool, notes: list[str],
                  drafted: dict[str, int], where: dict[str, Path]) -> list[Path]:
    """The folders to pass as ``skill.paths`` for one PATH, drafting where a skill has no case."""
    empty = [d for d in _skill_dirs(path) if not has_eval_assets(d)]
    if not empty:
        return [path]
    if write_drafts:
        for d in empty:
            name = load_skill(d).name
            where[name], drafted[name] = _draft(d, None, notes)
        return [path]
    if is_plugin(path):
        copy = _copy(path, out / DRAFTS / plugin_name(path))
        for d in empty:
            name = load_skill(d).name
            where[name], drafted[name] = _draft(copy / d.relative_to(path), copy, notes)
        return [copy]
    kept = [d for d in _skill_dirs(path) if d not in empty]
    copies = []
    for d in empty:
        name = load_skill(d).name
        copy = _copy(d, out / DRAFTS / name)
        where[name], drafted[name] = _draft(copy, copy, notes)
        copies.append(copy)
    return kept + copies


def _unreviewed(paths: list[Path], drafted: dict[str, int]) -> None:
    """Count the cases still marked draft in skills eval did not draft itself."""
    for path in paths:
        for d in _skill_dirs(path):
            skill = load_skill(d)
            if skill.name in drafted or not has_eval_assets(d):
                continue
            n = sum(c.status == "draft" for c in load_suite(d, skill.name).evals)
            if n:
                drafted[skill.name] = n


def _quoted(path: Path) -> str:
    """A path as a Hydra quoted string: spaces, commas and brackets in it stay part of it."""
    return "'" + str(path).replace("'", "\\'") + "'"


def prepare_eval(args: list[str]) -> EvalPlan:
    """The study's argv for ``aces-bench eval ARGS``, after drafting cases where a skill has none."""
    parsed = parse_eval_args(args)
    plugins = [p for p in parsed.paths if is_plugin(p)]
    if plugins and len(plugins) != len(parsed.paths):
        raise ConfigError("plugins and skill folders in one command", where=str(plugins[0]),
                          fix="evaluate plugins and skills in separate commands")
    names = [plugin_name(p) if is_plugin(p) else load_skill(d).name
             for p in parsed.paths for d in ([p] if is_plugin(p) else discover_skill_dirs(p))]
    study_name = _override(parsed.overrides, "study.name") or _study_name(names)
    out = output_dir(parsed.overrides, study_name)
    notes: list[str] = []
    drafted: dict[str, int] = {}
    where: dict[str, Path] = {}
    paths: list[Path] = []
    for p in parsed.paths:
        paths += _prepare_path(p, out, parsed.write_drafts, notes, drafted, where)
    _unreviewed(paths, drafted)
    joined = ",".join(_quoted(p.resolve()) for p in paths)
    argv = ["skill=custom", f"skill.paths=[{joined}]"]
    if plugins:
        argv.append("skill.intervention=plugin")
    if drafted and _override(parsed.overrides, "skill.accept_drafts") is None:
        argv.append("skill.accept_drafts=true")
    if _override(parsed.overrides, "study.name") is None:
        argv.append(f"study.name={study_name}")
    closing = []
    for skill, n in sorted(drafted.items()):
        at = f" in {where[skill]}" if skill in where else ""
        closing.append(f"note: {skill}'s verdict rests on {n} unreviewed drafted case(s){at}: review them (add checks "
                       "there), then delete their 'status: draft' line (or 'aces-bench dataset refine --confirm')")
    return EvalPlan(argv=[*parsed.flags, *argv, *parsed.overrides], notes=notes, closing=closing,
                    drafted=drafted, where=where)
