"""Which skills a change touched: files changed since a git ref, mapped to skill folders,
plus the skills that depend on them (support roles, bundles, frontmatter ``requires``)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from aces_bench.core.errors import ConfigError
from aces_bench.inputs.skills import SKILL_FILE, discover_skill_dirs, load_skill


class SkillChange(BaseModel):
    name: str
    path: Path
    reason: str = "changed"  # "changed: <files>" or "depends on <skill> (<how>)"
    content_hash: str


def _git(repo: Path, *args: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False,
                              timeout=60)
    except FileNotFoundError:
        raise ConfigError("git is not installed", where="aces-bench ci", fix="install git") from None
    if proc.returncode != 0:
        raise ConfigError(f"git {' '.join(args)} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'no output'}",
                          where=repo, fix="run inside a git repository and give a ref that exists (e.g. --since HEAD~1)")
    return proc.stdout


def repo_root(path: Path) -> Path:
    return Path(_git(path, "rev-parse", "--show-toplevel").strip())


def head_commit(repo: Path) -> tuple[str, bool]:
    """The HEAD commit and whether the work tree has uncommitted changes."""
    commit = _git(repo, "rev-parse", "HEAD").strip()
    dirty = bool(_git(repo, "status", "--porcelain").strip())
    return commit, dirty


def changed_files(repo: Path, since: str) -> list[Path]:
    """Files that differ between ``since`` and the work tree, plus untracked ones (absolute)."""
    _git(repo, "rev-parse", "--verify", f"{since}^{{commit}}")
    names = _git(repo, "diff", "--name-only", since, "--").splitlines()
    names += _git(repo, "ls-files", "--others", "--exclude-standard").splitlines()
    return sorted({(repo / n).resolve() for n in names if n.strip()})


def skill_dirs(roots: Sequence[Path]) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        if (root / SKILL_FILE).is_file():
            out.append(root.resolve())
        elif root.is_dir():
            out += [p.resolve() for p in discover_skill_dirs(root)]
        else:
            raise ConfigError("skills folder does not exist", where=root, fix="pass --skills <folder of skill folders>")
    return sorted(set(out))


def dependants(skills: Mapping[str, Path], support: Mapping[str, Iterable[str]],
               bundles: Mapping[str, Iterable[str]]) -> dict[str, list[tuple[str, str]]]:
    """skill -> [(skill that depends on it, how)]: support users, bundle mates, frontmatter requires."""
    out: dict[str, list[tuple[str, str]]] = {}
    for name, users in support.items():
        for user in users:
            out.setdefault(name, []).append((user, "support skill"))
    for bundle, members in bundles.items():
        members = list(members)
        for m in members:
            for other in members:
                if other != m:
                    out.setdefault(m, []).append((other, f"bundle {bundle}"))
    for name, path in skills.items():
        requires = load_skill(path).frontmatter.get("requires") or []
        for req in [requires] if isinstance(requires, str) else requires:
            out.setdefault(str(req), []).append((name, "frontmatter requires"))
    return out


def detect(repo: Path, since: str | None, roots: Sequence[Path], *, support: Mapping[str, Iterable[str]] = {},
           bundles: Mapping[str, Iterable[str]] = {}) -> tuple[list[SkillChange], list[Path]]:
    """The skills to run (changed ones, then their dependants) and every skill found.

    Without ``since`` every skill is "changed" (a first run, e.g. to store a baseline).
    """
    dirs = skill_dirs(roots)
    loaded = {load_skill(d).name: d for d in dirs}
    changed: dict[str, SkillChange] = {}
    files = changed_files(repo, since) if since else None
    for name, path in loaded.items():
        touched = [f for f in files if f.is_relative_to(path)] if files is not None else None
        if touched is None or touched:
            what = "no --since: every skill runs" if touched is None else \
                "changed: " + ", ".join(str(f.relative_to(path)) for f in touched[:5]) + (" ..." if len(touched) > 5 else "")
            changed[name] = SkillChange(name=name, path=path, reason=what, content_hash=load_skill(path).content_hash)
    deps = dependants(loaded, support, bundles)
    queue = list(changed)
    while queue:
        name = queue.pop()
        for user, how in deps.get(name, []):
            if user in loaded and user not in changed:
                changed[user] = SkillChange(name=user, path=loaded[user], reason=f"depends on {name} ({how})",
                                            content_hash=load_skill(loaded[user]).content_hash)
                queue.append(user)
    return sorted(changed.values(), key=lambda c: c.name), dirs
