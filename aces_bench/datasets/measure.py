"""How decidable and how sharp the offline drafts are, measured on real skills (``make bench``).

For each skill with scripts, ``dataset create``'s offline drafts are built and three
shares counted:

- decidable: drafted cases with at least one check decided without a judge
  (``judged_only`` false);
- satisfied: of the task drafts (explicit, implicit, contextual) that rest on the
  documented script, those whose checks the skill's own script passes when it is run,
  as documented, on the draft's fixture in the bubblewrap sandbox (network off, a
  timeout), its standard output taken as the answer and its files as the files written;
- caught: of those satisfied, the share a deliberately broken copy of the script fails
  (``mutants.broken_copies``: its counts and sums off by one, whether by ``len``/``sum``
  or pandas' ``.sum()``/``.count()``/``.shape[0]``; its last step that does work
  skipped). Of each kind's candidate copies the first whose run on the fixture
  ``differs`` from the script's is the one counted; where none differs (an equivalent
  mutant: the change never shows on what the draft gives the script), the first is
  counted all the same, so the measure errs against the drafts.

The script runs the way a task environment that installed the skill's packages would
run it: with this interpreter's packages (the project venv: numpy, pandas, scipy,
matplotlib, pyyaml...) shown read-only in the sandbox (:func:`interpreter_binds`). A
script that needs what cannot be had offline here (a package this interpreter lacks, a
web service's credential, a command the host lacks: ``runnable.not_runnable``) is
"not runnable here": its task drafts are counted apart (``unrunnable``, with the reason
in ``why``) and left out of ``satisfied``'s denominator. A runnable script that reads
another input shape than the draft's fixture fails its drafts and counts against
``satisfied``: the checks are never tuned to the script.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from aces_bench.cases.model import EvalCase
from aces_bench.core.io import remove_tree
from aces_bench.datasets.decidable import DraftPlan, plan_draft
from aces_bench.datasets.grounding import Grounding, ground, interpreter_binds, staged_root
from aces_bench.datasets.mutants import broken_copies
from aces_bench.datasets.runnable import not_runnable
from aces_bench.datasets.templates import template_cases
from aces_bench.inputs.skills import Skill
from aces_bench.inputs.skilltree import read_regular
from aces_bench.verifier.check_answer import evaluate_checks

TASK_BUCKETS = ("explicit", "implicit", "contextual")
RUN_TIMEOUT = 30.0
MAX_READ = 1_000_000
_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?")  # 2026-12-06 06:45:33, ISO too


@dataclass
class Run:
    """One run of a command in the sandbox: exit status, standard output, files under the workspace."""

    exit_code: int
    stdout: str
    files: dict[str, str] = field(default_factory=dict)
    stderr: str = ""


@dataclass
class SkillMeasure:
    skill: str
    cases: int = 0
    decidable: int = 0
    task_drafts: int = 0
    satisfied: int = 0
    mutants: int = 0
    caught: int = 0
    unrunnable: int = 0  # task drafts whose script cannot run here (left out of satisfied's denominator)
    why: str = ""


async def run_command(skill: Skill, command: str, data: dict[str, bytes], script_text: tuple[str, str] | None = None,
                      timeout: float = RUN_TIMEOUT) -> Run:
    """Run ``command`` (its ``scripts/...`` resolved in the skill) in a fresh sandbox, network off,
    with the running interpreter's packages (:func:`interpreter_binds`)."""
    from aces_bench.backends.bwrap import ExecTimeout, Sandbox, sandbox_env
    from aces_bench.backends.rootfs import python_alias_binds

    root = staged_root(skill, data)
    try:
        skill_dir = f"/skills/{skill.path.name}"
        if script_text is not None:
            (root / "skills" / skill.path.name / script_text[0]).write_text(script_text[1], encoding="utf-8")
        (root / "workspace" / "out").mkdir()
        words = [f"{skill_dir}/{w}" if _in_skill(skill, w) else w for w in shlex.split(command)]
        binds, env = interpreter_binds()
        env = {**env, "PYTHONPATH": skill_dir}  # ``from scripts.x import``: as run from the skill's folder
        box = Sandbox(root, (*python_alias_binds(root), *binds))
        await box.start()
        try:
            try:
                out = await box.exec(["bash", "-c", " ".join(shlex.quote(w) for w in words)], cwd="/workspace",
                                     env=sandbox_env(env), timeout_sec=timeout)
            except ExecTimeout:
                return Run(exit_code=124, stdout="")
        finally:
            await box.stop()
        files = {}
        for path in (root / "workspace" / "out").rglob("*"):
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(root / "workspace").as_posix()] = path.read_bytes()[:MAX_READ].decode(
                    "utf-8", "replace")
        return Run(out.return_code, out.stdout.decode("utf-8", "replace"), files,
                   out.stderr.decode("utf-8", "replace"))
    finally:
        remove_tree(root, ignore_errors=True)


def _in_skill(skill: Skill, word: str) -> bool:
    """A word naming a file the skill ships (``scripts/x.py``, ``assets/template.tex``): the agent would
    point at the skill's copy, so the run does too. The draft's own ``data/`` and ``out/`` never are."""
    if word.startswith(("-", "/", "data/", "out/")) or "/" not in word or ".." in word:
        return False
    return word.startswith("scripts/") or (skill.path / word).is_file()


def passes(case: EvalCase, run: Run) -> bool:
    """The case's decidable checks on a run: the script exited cleanly and every check holds."""
    if run.exit_code != 0:
        return False
    def tree(name: str) -> dict[str, str] | None:
        found = {p: t for p, t in run.files.items() if p == name or p.startswith(name.rstrip("/") + "/")}
        return found or None

    results = evaluate_checks([c.as_checker_dict() for c in case.checks],
                              lambda name: run.stdout if name is None else run.files.get(name), read_tree=tree)
    return all(r["passed"] for r in results)


def _inputs(skill: Skill, plan: DraftPlan, g: Grounding) -> tuple[str | None, dict[str, bytes]]:
    """The command a task draft rests on and the fixture it is run on."""
    if g.derived is not None:
        return g.derived.command, {PurePosixPath(f).name: read_regular(skill.path / f) for f in g.derived.fixtures}
    if plan.fixture is not None and plan.command:
        return plan.command, {plan.fixture_dest.removeprefix("data/"): plan.fixture.text.encode()}
    return plan.command, {}  # the documented command as written (it may need no input), or nothing to run


def measure_skill(skill: Skill, others: list[Skill] = ()) -> SkillMeasure:
    """Draft a skill's cases offline and measure them (see the module docstring)."""
    m = SkillMeasure(skill=skill.name)
    g = ground(skill)
    plan = plan_draft(skill, g)
    cases = template_cases(skill, others=list(others), grounding=g, plan=plan)
    m.cases = len(cases)
    m.decidable = sum(not c.judged_only for c in cases)
    tasks = [c for c in cases if c.kind in TASK_BUCKETS and c.expected_script and not c.judged_only]
    m.task_drafts = len(tasks)
    command, data = _inputs(skill, plan, g)
    if tasks and plan.script and (why := not_runnable(skill, plan.script.script)):
        return _unrunnable(m, why)
    if not tasks or command is None:
        m.why = plan.why_judged or "no documented command could be filled with a fixture"
        return m
    real = asyncio.run(run_command(skill, command, data))
    if real.exit_code and plan.script and (why := not_runnable(skill, plan.script.script, real.stdout,
                                                                  real.stderr or f"exit {real.exit_code}")):
        return _unrunnable(m, why)
    good = [c for c in tasks if passes(c, real)]
    m.satisfied = len(good)
    if not good:
        m.why = f"the script exited {real.exit_code}" if real.exit_code else "the script's output fails the checks"
        return m
    script = plan.script.script if plan.script else None
    source = read_regular(skill.path / script).decode("utf-8", "replace") if script else ""
    copies_by_kind = broken_copies(script or "", source)
    again = asyncio.run(run_command(skill, command, data)) if copies_by_kind else None
    for copies in copies_by_kind.values():
        broken = _broken_run(skill, command, data, script, copies, real, again)
        m.mutants += len(good)
        m.caught += sum(not passes(c, broken) for c in good)
    return m


def _broken_run(skill: Skill, command: str, data: dict[str, bytes], script: str, copies: list[str],
                real: Run, again: Run | None = None) -> Run:
    """The run of the first copy that ``differs`` from the script's run (``again``: its second run,
    for output that varies from run to run), else of the first copy."""
    first = None
    for text in copies:
        run = asyncio.run(run_command(skill, command, data, (script, text)))
        if differs(real, run, again):
            return run
        first = first or run
    return first


def differs(real: Run, copy: Run, again: Run | None = None) -> bool:
    """True when a copy's run gives something the script's run does not: another exit status, other
    files written, or other standard output, timestamps aside and log lines aside (a line naming a file
    either run wrote says where the work went; it is not the work).

    ``again``: a second run of the unchanged script. Where the two differ, the script's output varies
    from run to run (a random port, a generated key): every token holding a digit is then set aside
    in all three runs, and if the script's two runs still differ, no copy can be shown to differ."""
    written = set(real.files) | set(copy.files) | (set(again.files) if again else set())
    if real.exit_code != copy.exit_code:
        return True
    mask = again is not None and _seen(real, written) != _seen(again, written)
    if mask and _seen(real, written, mask) != _seen(again, written, mask):
        return False
    return _seen(real, written, mask) != _seen(copy, written, mask)


_DIGITS = re.compile(r"[\w.-]*\d[\w.-]*")  # a port, a key, an id: any token with a digit in it


def _seen(run: Run, written: set[str], mask: bool = False) -> tuple[str, list[tuple[str, str]]]:
    def plain(text: str) -> str:
        text = _STAMP.sub("<time>", text)
        return _DIGITS.sub("<n>", text) if mask else text

    lines = [ln for ln in run.stdout.splitlines() if ln.strip() and not any(path in ln for path in written)]
    return plain("\n".join(lines)), sorted((path, plain(text)) for path, text in run.files.items())


def _unrunnable(m: SkillMeasure, why: str) -> SkillMeasure:
    m.unrunnable, m.task_drafts, m.why = m.task_drafts, 0, f"not runnable here: {why}"
    return m


def share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
