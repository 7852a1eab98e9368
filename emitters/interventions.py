"""What a study adds or withholds: one skill, a bundle of skills, or a plugin.

The with-skill condition stages every member of the intervention, the baseline none;
lift is attributed to the intervention's name. A plugin is a folder in the Claude
Code plugin layout (``.claude-plugin/plugin.json`` naming it, skills under
``skills/``, and ``commands/``, ``agents/``, ``hooks/hooks.json``, ``.mcp.json``); a
folder without the manifest is named after itself. Its skills are staged as skills
for every harness, and the whole folder at ``/plugins/<name>/`` for the harnesses that
load plugins (``emitters/plan.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import SkillError
from aces_bench.inputs.skills import SAFE_NAME, Skill, discover_skill_dirs, evaluation_asset, iter_files, load_skill

PLUGIN_MANIFEST = ".claude-plugin/plugin.json"

# What this process loaded from a folder (a skill, its cases), keyed by the folder and
# a stamp of every entry under it (path, size, mtime, ctime, inode). Sweep members plan
# the same skills: each is read and validated once, and any edit, added or removed
# file changes the stamp, so a changed folder is read again. Errors are not kept.
_LOADED: dict[tuple[str, str, tuple], object] = {}


def forget_loaded() -> None:
    """Forget the folders this process loaded (benchmarks time a cold plan)."""
    _LOADED.clear()


def tree_stamp(root: Path) -> tuple:
    """(relative path, size, mtime_ns, ctime_ns, inode) of every entry under ``root``, sorted."""
    out = []
    stack = [str(root)]
    while stack:
        top = stack.pop()
        with os.scandir(top) as it:
            for entry in it:
                try:
                    st = entry.stat()  # a symlink's target: editing it must change the stamp
                except OSError:
                    st = entry.stat(follow_symlinks=False)
                out.append((entry.path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return tuple(sorted(out))


def loaded[T](kind: str, path: Path, load: Callable[[], T]) -> T:
    """``load()``, or what it returned for ``path`` earlier in this process if nothing under it changed."""
    root = Path(path).resolve()
    try:
        key = (kind, str(root), tree_stamp(root))
    except OSError:
        # A folder that is missing or unreadable is not kept: ``load`` names it and the fix.
        return load()
    if key not in _LOADED:
        for old in [k for k in _LOADED if k[:2] == key[:2]]:
            del _LOADED[old]
        _LOADED[key] = load()
    return _LOADED[key]  # type: ignore[return-value]


PLUGIN_PARTS = ("skills", "commands", "agents", "hooks", "mcp", "other")
"""What a Claude Code plugin folder can hold; ``other`` is its remaining files (scripts its hooks run...)."""


class PluginLayout(BaseModel):
    """A plugin folder as staged: its files (evaluation assets left out) and which parts it has."""

    model_config = ConfigDict(frozen=True)

    path: Path
    files: tuple[tuple[str, bytes], ...]
    parts: tuple[str, ...]


class Intervention(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    kind: Literal["skill", "bundle", "plugin"]
    members: tuple[Skill, ...]
    plugin: PluginLayout | None = None
    """A plugin intervention's whole folder, staged beside its members' skills."""


def load_skills(paths: list[Path]) -> list[Skill]:
    """Every skill under ``paths`` (skill folders or folders of them), sorted by name.

    Two different folders with one skill name are refused: staging would collide.
    """
    skills: dict[str, Skill] = {}
    for path in paths:
        for skill_dir in discover_skill_dirs(path):
            skill = loaded("skill", skill_dir, lambda d=skill_dir: load_skill(d))
            if skill.name in skills and skills[skill.name].path != skill.path:
                raise SkillError(
                    f"two skills are named {skill.name!r} ({skills[skill.name].path} and {skill.path})",
                    where=skill.path / "SKILL.md",
                    fix="give each skill a unique 'name' in its frontmatter",
                )
            skills[skill.name] = skill
    return [skills[n] for n in sorted(skills)]


def plugin_name(path: Path) -> str:
    """The plugin's name from its manifest, else the folder's name."""
    manifest = path / PLUGIN_MANIFEST
    name = path.resolve().name
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise SkillError(f"plugin manifest is not valid JSON: {exc}", where=manifest,
                             fix="fix the JSON (it needs at least a \"name\")") from None
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise SkillError("plugin manifest has no string 'name'", where=f"{manifest}:name",
                             fix='add "name": "<plugin-name>"')
        name = data["name"]
    if not SAFE_NAME.match(name):
        raise SkillError(f"plugin name {name!r} is not a safe identifier", where=manifest,
                         fix="use letters, digits, '-', '_' and '.' only")
    return name


def _part(rel: str, manifest: dict) -> str:
    top = rel.split("/", 1)[0]
    extra = {k: [str(v).lstrip("./").rstrip("/")] if isinstance(v, str) else [str(x).lstrip("./").rstrip("/")
                                                                                 for x in v if isinstance(x, str)]
             for k, v in manifest.items() if k in ("commands", "agents", "hooks", "mcpServers")
             and isinstance(v, str | list)}
    for part, key in (("commands", "commands"), ("agents", "agents"), ("hooks", "hooks"), ("mcp", "mcpServers")):
        if any(rel == p or rel.startswith(p + "/") for p in extra.get(key, [])):
            return part
    if top in ("skills", "commands", "agents", "hooks"):
        return top
    if rel in (".mcp.json", "mcp.json"):
        return "mcp"
    return "other"


def plugin_layout(path: Path) -> PluginLayout:
    """Every file of the plugin folder but its evaluation assets (the one staging rule, at the plugin's root
    and at each member skill's), and the parts it holds (manifest-declared paths and inline hooks/MCP too)."""
    root = Path(path).resolve()
    manifest_path = root / PLUGIN_MANIFEST
    manifest: dict = {}
    if manifest_path.is_file():
        try:
            loaded_manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            manifest = loaded_manifest if isinstance(loaded_manifest, dict) else {}
        except (ValueError, UnicodeDecodeError):
            manifest = {}  # plugin_name() already refused an unreadable manifest
    files, parts = [], set()
    for p in iter_files(root):
        rel = p.relative_to(root).as_posix()
        member = rel.split("/", 2)[2] if rel.startswith("skills/") and rel.count("/") >= 2 else None
        if evaluation_asset(rel) is not None or (member is not None and evaluation_asset(member) is not None):
            continue
        files.append((rel, p.read_bytes()))
        if not rel.startswith(".claude-plugin/"):
            parts.add(_part(rel, manifest))
    if isinstance(manifest.get("hooks"), dict):
        parts.add("hooks")
    if isinstance(manifest.get("mcpServers"), dict):
        parts.add("mcp")
    return PluginLayout(path=root, files=tuple(files), parts=tuple(p for p in PLUGIN_PARTS if p in parts))


def load_plugin(path: Path) -> Intervention:
    path = Path(path)
    if not path.is_dir():
        raise SkillError("plugin folder does not exist", where=path, fix="point skill.paths at plugin folders")
    skills_root = path / "skills" if (path / "skills").is_dir() else path
    members = load_skills([skills_root])
    return Intervention(name=plugin_name(path), kind="plugin", members=tuple(members),
                        plugin=loaded("plugin", path, lambda: plugin_layout(path)))


def load_interventions(spec: RunSpec) -> list[Intervention]:
    """The spec's interventions, in a stable order; member names are unique across them."""
    kind = spec.skill.intervention
    if kind == "plugin":
        out = [load_plugin(p) for p in spec.skill.paths]
    elif kind == "bundle":
        out = [Intervention(name=spec.skill.intervention_name or "", kind="bundle",
                            members=tuple(load_skills(spec.skill.paths)))]
    else:
        out = [Intervention(name=s.name, kind="skill", members=(s,)) for s in load_skills(spec.skill.paths)]
    owner: dict[str, str] = {}
    names: set[str] = set()
    for iv in out:
        if iv.name in names:
            raise SkillError(f"two interventions are named {iv.name!r}", where="skill.paths",
                             fix="give each plugin a unique name in .claude-plugin/plugin.json")
        names.add(iv.name)
        for m in iv.members:
            if m.name in owner:
                raise SkillError(
                    f"skill {m.name!r} belongs to both {owner[m.name]!r} and {iv.name!r}",
                    where=m.path,
                    fix="an intervention's skills must not appear in another one",
                )
            owner[m.name] = iv.name
    return sorted(out, key=lambda i: i.name)
