"""What a drafted case can be grounded in: the skill's own text, scripts and files.

From SKILL.md: the documented Usage command, the command lines of its code-block
examples, the bullets of its "when to use" sections and of its instructions. From the
folder: its scripts (and what ``--help`` prints for each, run in the sandbox), and
small text files under ``references/``, ``assets/``, ``examples/`` or ``evals/files/``
that can be staged as fixtures. When the Usage command can be run on a fixture, it is
run in a bubblewrap sandbox (network off) on a copy of the skill, and its output is
the expected output of the drafted cases (marked "derived by running the skill:
review"). Nothing here needs a model.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from markdown_it import MarkdownIt

from aces_bench.agents.usage import UnusableUsage, build_invocation, usage_line
from aces_bench.skills import Skill

FIXTURE_DIRS = ("evals/files", "references", "assets", "examples", "data")
FIXTURE_SUFFIXES = frozenset({".csv", ".tsv", ".json", ".txt", ".log", ".yaml", ".yml", ".xml", ".md", ".ini", ".toml"})
MAX_FIXTURE = 200_000
SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".js", ".mjs"})
RUN_TIMEOUT = 20.0
_WHEN = re.compile(r"\b(when to use|use when|use this skill|when to apply|triggers?|use cases?|when)\b", re.I)
_WHEN_NOT = re.compile(r"\b(not|don't|do not|avoid|never)\b", re.I)
_DO = re.compile(r"\b(instructions?|steps?|workflow|process|procedure|rules?|how to|checklist|phases?|quick start)\b", re.I)
_COMMAND = re.compile(r"^(?:\$ )?(python3?|bash|sh|node|npx|uv|pip|\./|scripts/)\S*")
DERIVED_NOTE = "derived by running the skill: review"


@dataclass
class Derived:
    """The Usage command run on a fixture in the sandbox."""

    command: str
    fixture: str
    stdout: str
    stderr: str
    exit_code: int


@dataclass
class Grounding:
    usage: str | None = None
    examples: list[str] = field(default_factory=list)
    when: list[str] = field(default_factory=list)
    when_not: list[str] = field(default_factory=list)
    directives: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    helps: dict[str, str] = field(default_factory=dict)
    fixtures: list[str] = field(default_factory=list)
    derived: Derived | None = None
    failure: Derived | None = None  # the command on a missing input: the skill's own error
    unrun: str | None = None  # why nothing was run


def _clean(text: str) -> str:
    text = re.sub(r"[*_`]+", "", " ".join(text.split()))
    return text.strip(" .:;")


def _sections(body: str) -> list[tuple[str, list[str], list[str]]]:
    """(heading, list items, code lines) per section of the body, in order."""
    tokens = MarkdownIt("commonmark").parse(body)
    out: list[tuple[str, list[str], list[str]]] = [("", [], [])]
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            out.append((_clean(tokens[i + 1].content), [], []))
        elif tok.type == "list_item_open":
            depth += 1
        elif tok.type == "list_item_close":
            depth -= 1
        elif tok.type == "inline" and depth == 1 and tokens[i - 1].type == "paragraph_open":
            out[-1][1].append(_clean(tok.content))
        elif tok.type == "fence":
            out[-1][2].extend(line.strip() for line in tok.content.splitlines() if line.strip())
    return out


def _fixtures(skill_dir: Path) -> list[str]:
    root = skill_dir.resolve()
    found = []
    for rel in FIXTURE_DIRS:
        base = root / rel
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if (p.is_file() and not p.is_symlink() and p.suffix.lower() in FIXTURE_SUFFIXES
                    and 0 < p.stat().st_size <= MAX_FIXTURE):
                found.append(p.relative_to(root).as_posix())
    return found


def ground(skill: Skill, *, run: bool = True) -> Grounding:
    """Everything a drafted case can use from the skill (runs its command in the sandbox when ``run``)."""
    g = Grounding(usage=usage_line(skill.body))
    for heading, items, code in _sections(skill.body):
        items = [i for i in items if 3 <= len(i) <= 200]
        if _WHEN.search(heading):
            (g.when_not if _WHEN_NOT.search(heading) else g.when).extend(items)
        elif _DO.search(heading):
            g.directives.extend(items)
        g.examples += [c.removeprefix("$ ") for c in code if _COMMAND.match(c) and not c.startswith("#")]
    g.examples = list(dict.fromkeys(g.examples))
    g.scripts = sorted(p.relative_to(skill.path).as_posix() for p in (skill.path / "scripts").rglob("*")
                       if p.is_file() and p.suffix in SCRIPT_SUFFIXES) if (skill.path / "scripts").is_dir() else []
    g.fixtures = _fixtures(skill.path)
    if run:
        asyncio.run(_run_in_sandbox(skill, g))
    return g


def _has_sandbox() -> str | None:
    from aces_bench.backends.bwrap import find_tools

    try:
        _, missing = find_tools()
    except Exception as exc:  # noqa: BLE001 - any probe failure means: cannot run here
        return f"the sandbox is unavailable ({exc})"
    return f"the sandbox tools are missing ({', '.join(missing)})" if missing else None


async def _run_in_sandbox(skill: Skill, g: Grounding) -> None:
    why = _has_sandbox()
    if why is None and not (g.usage or g.scripts):
        why = "the skill documents no command and has no scripts"
    if why is not None:
        g.unrun = why
        return
    from aces_bench.backends.bwrap import Sandbox, sandbox_env
    from aces_bench.backends.local import python_alias_binds
    from aces_bench.backends.rootfs import make_skeleton

    root = Path(tempfile.mkdtemp(prefix="aces-draft-"))
    try:
        make_skeleton(root)
        skills = root / "skills"
        shutil.copytree(skill.path, skills / skill.path.name, symlinks=False,
                        ignore=shutil.ignore_patterns("evals", ".git"))
        work = root / "workspace" / "data"
        work.mkdir(parents=True)
        for rel in g.fixtures:
            shutil.copyfile(skill.path / rel, work / PurePosixPath(rel).name)
        box = Sandbox(root, python_alias_binds(root))
        await box.start()
        try:
            env = sandbox_env(None)
            for script in g.scripts:
                if script.endswith(".py"):
                    out = await box.exec(["python3", f"/skills/{skill.path.name}/{script}", "--help"],
                                         cwd="/workspace", env=env, timeout_sec=RUN_TIMEOUT)
                    if out.return_code == 0 and out.stdout.strip():
                        g.helps[script] = out.stdout.decode("utf-8", "replace").strip()
            if g.usage:
                skill_dir = f"/skills/{skill.path.name}"
                for fixture in g.fixtures or [None]:
                    inputs = [f"data/{PurePosixPath(fixture).name}"] if fixture else []
                    try:
                        inv = build_invocation(g.usage, skill_dir, inputs)
                    except UnusableUsage as exc:
                        g.unrun = f"the Usage command cannot be filled in ({exc})"
                        break
                    out = await box.exec(["bash", "-c", inv.command], cwd="/workspace", env=env,
                                         timeout_sec=RUN_TIMEOUT)
                    run = Derived(command=inv.command.replace(skill_dir + "/", ""), fixture=fixture or "",
                                  stdout=out.stdout.decode("utf-8", "replace").strip(),
                                  stderr=out.stderr.decode("utf-8", "replace").strip(), exit_code=out.return_code)
                    if run.exit_code == 0 and run.stdout:
                        g.derived = run
                        break
                if g.derived is not None:
                    missing = build_invocation(g.usage, skill_dir, ["data/missing-input.txt"])
                    out = await box.exec(["bash", "-c", missing.command], cwd="/workspace", env=env,
                                         timeout_sec=RUN_TIMEOUT)
                    g.failure = Derived(command=missing.command.replace(skill_dir + "/", ""),
                                        fixture="data/missing-input.txt",
                                        stdout=out.stdout.decode("utf-8", "replace").strip(),
                                        stderr=out.stderr.decode("utf-8", "replace").strip(),
                                        exit_code=out.return_code)
                elif g.unrun is None:
                    g.unrun = "the Usage command did not succeed on any fixture"
        finally:
            await box.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
