"""What a drafted case can be grounded in: the skill's own text, scripts and files.

From SKILL.md: the documented Usage command, the command lines of its code-block
examples, the bullets of its "when to use" sections and of its instructions. From the
folder: its scripts (and what ``--help`` prints for each, run in the sandbox with the
project interpreter's packages, ``interpreter_binds``), and
small text files under ``references/``, ``assets/``, ``examples/`` or ``evals/files/``
that can be staged as fixtures. When the Usage command can be run on a fixture, it is
run in a bubblewrap sandbox (network off) on a copy of the skill, and its output is
the expected output of the drafted cases (marked "derived by running the skill:
review"). Nothing here needs a model.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from markdown_it import MarkdownIt

from aces_bench.agents.usage import UnusableUsage, build_invocation, usage_line
from aces_bench.core.io import remove_tree
from aces_bench.datasets.scriptref import COUNTER
from aces_bench.inputs.skills import Skill, evaluation_asset
from aces_bench.inputs.skilltree import copy_tree, read_regular, walk

FIXTURE_DIRS = ("evals/files", "references", "reference", "assets", "examples", "data")
FIXTURE_SUFFIXES = frozenset({".csv", ".tsv", ".json", ".txt", ".log", ".yaml", ".yml", ".xml", ".md", ".ini", ".toml"})
MAX_FIXTURE = 200_000
SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".js", ".mjs"})
RUN_TIMEOUT = 20.0
PARALLEL_RUNS = 3  # --help runs at once beside the Usage command (the host may have 2 cores)
VENV_MOUNT = "/opt/venv"
_WHEN = re.compile(r"\b(when to use|use when|use this skill|when to apply|triggers?|use cases?|when)\b", re.I)
_WHEN_NOT = re.compile(r"\b(not|don't|do not|avoid|never)\b", re.I)
_DO = re.compile(r"\b(instructions?|steps?|workflow|process|procedure|rules?|how to|checklist|phases?|quick start)\b", re.I)
_COMMAND = re.compile(r"^(?:\$ )?(python3?|bash|sh|node|npx|uv|pip|\./|scripts/)\S*")
DERIVED_NOTE = "derived by running the skill: review"
# A bullet that tells the agent what not to do: never the ground of a task.
_NEGATIVE_ITEM = re.compile(r"^(\W\s*)?(don'?t|do not|never|avoid|not\b|no\b|wrong|bad|incorrect|❌|✗)", re.I)


@dataclass
class Derived:
    """The Usage command run on a fixture in the sandbox."""

    command: str
    fixtures: list[str]
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
    """(heading, list items, code lines) per section of the body, in order.

    Counter-examples are left out: a section headed like one ("Common mistakes",
    "Anti-patterns", "What not to do"), a bullet that says not to do something, a
    code block introduced by "Don't do this" or marked wrong.
    """
    tokens = MarkdownIt("commonmark").parse(body)
    out: list[tuple[str, list[str], list[str]]] = [("", [], [])]
    depth = 0
    skip_section = False
    last_text = ""
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            title = _clean(tokens[i + 1].content)
            skip_section = bool(COUNTER.search(title))
            out.append((title, [], []))
            last_text = ""
        elif tok.type == "list_item_open":
            depth += 1
        elif tok.type == "list_item_close":
            depth -= 1
        elif tok.type == "inline" and tokens[i - 1].type == "paragraph_open":
            last_text = tok.content
            if depth == 1 and not skip_section and not _NEGATIVE_ITEM.match(_clean(tok.content)):
                out[-1][1].append(_clean(tok.content))
        elif tok.type == "fence" and not skip_section and not COUNTER.search(last_text[-160:]):
            out[-1][2].extend(line.strip() for line in tok.content.splitlines()
                              if line.strip() and not COUNTER.search(line.split("#", 1)[-1] if "#" in line else ""))
    return out


def _fixtures(skill_dir: Path) -> list[str]:
    # The whole skill is walked (never a subfolder by its own path: ``references`` may be
    # a link out of the skill), keeping the files under the fixture folders.
    found = []
    for e in walk(skill_dir):
        if (e.is_file and not e.via_link and any(e.rel.startswith(d + "/") for d in FIXTURE_DIRS)
                and PurePosixPath(e.rel).suffix.lower() in FIXTURE_SUFFIXES and 0 < e.size <= MAX_FIXTURE):
            found.append(e.rel)
    found.sort(key=lambda rel: (next(i for i, d in enumerate(FIXTURE_DIRS) if rel.startswith(d + "/")),
                                PurePosixPath(rel)))
    return found


_PLACEHOLDER = re.compile(r"<([^<>\s][^<>]*)>")


def _rank(placeholder: str, fixture: str) -> int:
    """How well a fixture fits a placeholder: its name in the file name (2), the same suffix (1)."""
    ph = PurePosixPath(placeholder.strip(".").lower())
    name = PurePosixPath(fixture).name.lower()
    if ph.stem and ph.stem in name and (not ph.suffix or name.endswith(ph.suffix)):
        return 2
    return 1 if ph.suffix and name.endswith(ph.suffix) else 0


def input_sets(usage: str, fixtures: list[str], limit: int = 6) -> list[list[str]]:
    """Fixture lists to fill the Usage placeholders with, best guesses first.

    Each set starts from one fixture for the first placeholder and fills the others
    with the best-fitting fixture of the same family (the name before its first '-'),
    so ``<ledger.csv> <bank.csv>`` gets ``april-ledger.csv april-bank.csv``.
    """
    holders = [m.group(1) for m in _PLACEHOLDER.finditer(re.sub(r"\[[^\[\]]*\]", "", usage))]
    if not holders or not fixtures:
        return [[]] if not holders else []
    out: list[list[str]] = []
    firsts = sorted(fixtures, key=lambda f: (-_rank(holders[0], f), f))
    for first in firsts:
        if _rank(holders[0], first) == 0 and any(_rank(holders[0], f) for f in fixtures):
            break
        family = PurePosixPath(first).name.split("-")[0]
        chosen = [first]
        for h in holders[1:]:
            rest = [f for f in fixtures if f not in chosen]
            if not rest:
                break
            chosen.append(max(rest, key=lambda f: (_rank(h, f), PurePosixPath(f).name.startswith(family), f)))
        if len(chosen) == len(holders) and chosen not in out:
            out.append(chosen)
        if len(out) >= limit:
            break
    return out


def ground(skill: Skill, *, run: bool = True) -> Grounding:
    """Everything a drafted case can use from the skill (runs its command in the sandbox when ``run``)."""
    g = Grounding(usage=usage_line(skill.body))
    sections = _sections(skill.body)
    for heading, items, code in sections:
        items = [i for i in items if 3 <= len(i) <= 200]
        if _WHEN.search(heading):
            (g.when_not if _WHEN_NOT.search(heading) else g.when).extend(items)
        elif _DO.search(heading):
            g.directives.extend(items)
        g.examples += [c.removeprefix("$ ") for c in code if _COMMAND.match(c) and not c.startswith("#")]
    g.examples = list(dict.fromkeys(g.examples))
    if not g.directives:
        # No section is named like instructions: the body's own bullets, else its section headings.
        bullets = [i for _, items, _ in sections for i in items if 3 <= len(i) <= 200]
        heads = [h for h, _, _ in sections[1:] if h and not _WHEN.search(h) and 3 <= len(h) <= 80]
        g.directives = bullets[:5] or [f"covers '{h}' as SKILL.md describes it" for h in heads[:4]]
    g.scripts = sorted(e.rel for e in walk(skill.path)
                       if e.is_file and e.rel.startswith("scripts/") and PurePosixPath(e.rel).suffix in SCRIPT_SUFFIXES)
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


def interpreter_binds() -> tuple[tuple, dict[str, str]]:
    """The running interpreter shown read-only in the sandbox, first on ``PATH``: (binds, env).

    A task environment installs the packages a skill declares; offline, the closest
    stand-in is this interpreter (the project's venv: numpy, pandas, scipy, matplotlib,
    pyyaml...). Its base installation is bound at its own path (the venv's ``python``
    links to it by absolute path) and the venv at ``/opt/venv``; nothing is writable.
    """
    from aces_bench.backends.bwrap import Bind

    base, prefix = Path(sys.base_prefix), Path(sys.prefix)
    binds = [Bind(base, PurePosixPath(str(base)), read_only=True)]
    bin_dir = f"{base}/bin"
    if prefix != base:
        binds.append(Bind(prefix, PurePosixPath(VENV_MOUNT), read_only=True))
        bin_dir = f"{VENV_MOUNT}/bin"
    return tuple(binds), {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
                          "MPLBACKEND": "Agg"}


def staged_root(skill: Skill, data: dict[str, bytes]) -> Path:
    """A fresh sandbox root: the skill at ``/skills/<name>`` and ``data`` under ``/workspace/data``."""
    from aces_bench.backends.rootfs import make_skeleton

    root = Path(tempfile.mkdtemp(prefix="aces-draft-"))
    make_skeleton(root)
    # The one walk: a link (whatever its name) pointing out of the skill is refused, never copied;
    # the one staging rule: no evaluation asset in the draft's sandbox.
    copy_tree(skill.path, root / "skills" / skill.path.name, exclude=evaluation_asset)
    work = root / "workspace" / "data"
    work.mkdir(parents=True)
    for name, body in data.items():  # a name may hold a folder (``docs/notes.txt``): the script reads the folder
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(body)
    return root


async def _run_in_sandbox(skill: Skill, g: Grounding) -> None:
    why = _has_sandbox()
    if why is None and not (g.usage or g.scripts):
        why = "the skill documents no command and has no scripts"
    if why is not None:
        g.unrun = why
        return
    from aces_bench.backends.bwrap import Sandbox, sandbox_env
    from aces_bench.backends.rootfs import python_alias_binds

    root = staged_root(skill, {PurePosixPath(rel).name: read_regular(skill.path / rel) for rel in g.fixtures})
    try:
        binds, venv = interpreter_binds()
        box = Sandbox(root, (*python_alias_binds(root), *binds))
        await box.start()
        try:
            env = sandbox_env(None)
            # ``--help`` with the packages a task environment would have (a script importing pandas prints
            # its help); the Usage command as before, with the host's bare python3.
            help_env = sandbox_env({**venv, "PYTHONPATH": f"/skills/{skill.path.name}"})

            py = [s for s in g.scripts if s.endswith(".py")]
            # The scripts' --help and the Usage command run side by side: nothing of one feeds the other.
            gate = asyncio.Semaphore(PARALLEL_RUNS)

            async def help_of(script: str):
                async with gate:
                    return await box.exec(["python3", f"/skills/{skill.path.name}/{script}", "--help"],
                                          cwd="/workspace", env=help_env, timeout_sec=RUN_TIMEOUT)

            *helps, _ = await asyncio.gather(*(help_of(s) for s in py), _run_usage(box, skill, g, env))
            for script, out in zip(py, helps, strict=True):  # in the scripts' order, whatever finished first
                if out.return_code == 0 and out.stdout.strip():
                    g.helps[script] = out.stdout.decode("utf-8", "replace").strip()
        finally:
            await box.stop()
    finally:
        remove_tree(root, ignore_errors=True)


async def _run_usage(box, skill: Skill, g: Grounding, env: dict[str, str]) -> None:
    """The Usage command on the first fixture set it succeeds on, then on a missing input."""
    if not g.usage:
        return
    skill_dir = f"/skills/{skill.path.name}"
    sets = input_sets(g.usage, g.fixtures)
    if not sets:
        g.unrun = "no fixture fits the Usage command's inputs"
    for chosen in sets:
        inputs = [f"data/{PurePosixPath(f).name}" for f in chosen]
        try:
            inv = build_invocation(g.usage, skill_dir, inputs)
        except UnusableUsage as exc:
            g.unrun = f"the Usage command cannot be filled in ({exc})"
            break
        out = await box.exec(["bash", "-c", inv.command], cwd="/workspace", env=env,
                             timeout_sec=RUN_TIMEOUT)
        run = Derived(command=inv.command.replace(skill_dir + "/", ""), fixtures=chosen,
                      stdout=out.stdout.decode("utf-8", "replace").strip(),
                      stderr=out.stderr.decode("utf-8", "replace").strip(), exit_code=out.return_code)
        if run.exit_code == 0 and run.stdout:
            g.derived = run
            break
    if g.derived is not None:
        inputs = ["data/missing-input.txt"] + [f"data/{PurePosixPath(f).name}" for f in g.derived.fixtures[1:]]
        missing = build_invocation(g.usage, skill_dir, inputs)
        out = await box.exec(["bash", "-c", missing.command], cwd="/workspace", env=env,
                             timeout_sec=RUN_TIMEOUT)
        g.failure = Derived(command=missing.command.replace(skill_dir + "/", ""),
                            fixtures=["data/missing-input.txt"],
                            stdout=out.stdout.decode("utf-8", "replace").strip(),
                            stderr=out.stderr.decode("utf-8", "replace").strip(),
                            exit_code=out.return_code)
    elif g.unrun is None:
        g.unrun = "the Usage command did not succeed on any fixture"
