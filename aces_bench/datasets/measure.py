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
  (``broken_copies``: its counts and sums off by one, whether by ``len``/``sum`` or
  pandas' ``.sum()``/``.count()``/``.shape[0]``; its last step skipped).

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

import ast
import asyncio
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from aces_bench.cases.model import EvalCase
from aces_bench.core.io import remove_tree
from aces_bench.datasets.decidable import DraftPlan, plan_draft
from aces_bench.datasets.grounding import Grounding, ground, interpreter_binds, staged_root
from aces_bench.datasets.runnable import not_runnable
from aces_bench.datasets.templates import template_cases
from aces_bench.inputs.skills import Skill
from aces_bench.inputs.skilltree import read_regular
from aces_bench.verifier.check_answer import evaluate_checks

TASK_BUCKETS = ("explicit", "implicit", "contextual")
RUN_TIMEOUT = 30.0
MAX_READ = 1_000_000


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


_COUNTS = frozenset({"len", "sum"})
_COUNT_METHODS = frozenset({"sum", "count", "nunique"})  # pandas/numpy: ``df["x"].sum()``, ``s.count()``


def _off_by_one(tree: ast.Module) -> bool:
    """Every count and sum made one more (``len``, ``sum``, ``.sum()``, ``.count()``, ``.nunique()``,
    ``.shape[0]``): the script's main number off by one, however it computes it."""
    changed = False

    def bump(node: ast.expr) -> ast.expr:
        nonlocal changed
        changed = True
        return ast.BinOp(left=node, op=ast.Add(), right=ast.Constant(1))

    class Bump(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call):
            self.generic_visit(node)
            if isinstance(node.func, ast.Name) and node.func.id in _COUNTS:
                return bump(node)
            if isinstance(node.func, ast.Attribute) and node.func.attr in _COUNT_METHODS:
                return bump(node)
            return node

        def visit_Subscript(self, node: ast.Subscript):
            self.generic_visit(node)
            if (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
                    and isinstance(node.slice, ast.Constant) and node.slice.value == 0):
                return bump(node)
            return node

    Bump().visit(tree)
    return changed


def _message_only(node: ast.stmt) -> bool:
    """A statement that only prints fixed text (``print("Done!")``, ``print("=" * 60)``): no step of the work.

    Dropping it leaves a copy that behaves as the script does on everything a correct
    answer holds, so it is no broken copy; the step before it is the last one.
    """
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in ("print", "info", "echo", "write") or node.value.keywords and any(
            k.arg not in ("file", "end", "sep", "flush") for k in node.value.keywords):
        return False
    return all(not any(isinstance(x, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.FormattedValue))
                       for x in ast.walk(a)) for a in node.value.args)


def _skip_last_step(tree: ast.Module) -> bool:
    """The last step of ``main()`` (else of the ``__main__`` block, else of the module) removed:
    its last statement that is not a return, an import, a docstring, an exit or a fixed message."""
    bodies = [n.body for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    bodies += [n.body for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
    bodies.append(tree.body)
    for body in bodies:
        steps = [i for i, n in enumerate(body) if not isinstance(n, (ast.Return, ast.Import, ast.ImportFrom))
                 and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
                 and "exit" not in ast.unparse(n)[:40] and not _message_only(n)]
        if len(steps) >= 2:
            del body[steps[-1]]
            return True
    return False


def broken_copies(script: str, source: str) -> dict[str, str]:
    """Deliberately broken versions of a script: {'off by one': text, 'last step skipped': text} where they apply."""
    out: dict[str, str] = {}
    if script.endswith(".py"):
        for name, mutate in (("off by one", _off_by_one), ("last step skipped", _skip_last_step)):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                return {}
            if mutate(tree):
                out[name] = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    elif script.endswith(".sh"):
        lines = source.rstrip("\n").splitlines()
        steps = [i for i, ln in enumerate(lines) if ln.strip() and not ln.strip().startswith("#")]
        if len(steps) >= 2:
            out["last step skipped"] = "\n".join(ln for i, ln in enumerate(lines) if i != steps[-1]) + "\n"
    return out


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
    for text in broken_copies(script or "", source).values():
        broken = asyncio.run(run_command(skill, command, data, (script, text)))
        m.mutants += len(good)
        m.caught += sum(not passes(c, broken) for c in good)
    return m


def _unrunnable(m: SkillMeasure, why: str) -> SkillMeasure:
    m.unrunnable, m.task_drafts, m.why = m.task_drafts, 0, f"not runnable here: {why}"
    return m


def share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
