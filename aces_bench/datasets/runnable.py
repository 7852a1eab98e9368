"""Whether a skill's documented script can run here, offline, and if not why.

``make bench`` runs each skill's documented script on its drafts' fixtures to measure
them. A script that imports a package this interpreter lacks (rdkit, scanpy...),
needs a credential for a web service (network is off in the sandbox) or calls a
command the host does not have cannot show anything about the drafts: its failure
is the environment's, not the draft's. Such skills are counted apart as "not
runnable here", with the reason, never silently dropped. Nothing here runs the
script: it reads its source (imports, environment variables read, commands started).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import sys
from pathlib import PurePosixPath

from aces_bench.inputs.skills import Skill
from aces_bench.inputs.skilltree import read_regular, walk

_CREDENTIAL_NAME = re.compile(r"\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:API_KEY|TOKEN|SECRET|ACCESS_KEY)\b")
_SUBPROCESS = frozenset({"run", "call", "check_call", "check_output", "Popen"})
_NOT_FOUND = re.compile(r"No such file or directory: '([\w.+-]+)'")
_OFFLINE = re.compile(r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
                      r"nodename nor servname|getaddrinfo failed|Failed to resolve")
_NETWORK_MODULES = frozenset({"urllib", "requests", "httpx", "aiohttp", "http", "socket", "urllib3"})
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


def _local_modules(skill: Skill) -> set[str]:
    """Module names the skill ships itself (a ``.py`` file or a package folder anywhere in it)."""
    names = set()
    for e in walk(skill.path):
        parts = PurePosixPath(e.rel).parts
        if e.is_file and e.rel.endswith(".py"):
            names.add(PurePosixPath(e.rel).stem)
        names.update(parts[:-1])
    return names


def _imports(tree: ast.Module) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _credentials(tree: ast.Module) -> set[str]:
    """Credential-named environment variables the script reads or names (``OPENROUTER_API_KEY``, a .env line)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.update(m.group(0) for m in _CREDENTIAL_NAME.finditer(node.value))
    return out


def _commands(tree: ast.Module) -> set[str]:
    """Programs the script starts by name (``subprocess.run(["gh", ...])``, ``shutil.which("gh")``)."""
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        first = node.args[0]
        if name in _SUBPROCESS and isinstance(first, (ast.List, ast.Tuple)) and first.elts:
            first = first.elts[0]
        elif name != "which":
            continue
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip():
            out.add(first.value.split()[0])
    return out


def not_runnable(skill: Skill, script: str, stdout: str = "", stderr: str = "") -> str | None:
    """Why the skill's ``script`` cannot run offline with this interpreter and host, or None if it may.

    Called before a run (``stdout``/``stderr`` empty) it names only what is certain: a
    runner the host lacks, or a package imported at the script's top level, unguarded,
    that this interpreter lacks. Called after a failed run with its output it also names
    a guarded or late import of a missing package, a credential-named environment
    variable the script names (its web service is out of reach offline), a program it
    starts that the host lacks (named in the source and in the run's "No such file or
    directory"), or a host it could not resolve when it imports a network client, each
    only when the run's output shows it.
    """
    if not script.endswith(".py"):
        runner = "node" if script.endswith((".js", ".mjs")) else "bash"
        return None if shutil.which(runner) else f"needs {runner}, not installed here"
    try:
        tree = ast.parse(read_regular(skill.path / script).decode("utf-8", "replace"))
    except (OSError, SyntaxError, ValueError):
        return None  # the run itself will say what is wrong with it
    local = _local_modules(skill)
    said = stdout + stderr
    missing = sorted(m for m in _imports(tree) - local if m not in sys.stdlib_module_names and not _installed(m)
                     and (m in _top_level_imports(tree) or re.search(rf"\b{re.escape(m)}\b", said)))
    if missing:
        return f"needs Python package(s) {', '.join(missing)}, not installed here"
    if not said:
        return None
    # Named in the failed run's own words, so a script cannot be excused by a name it merely contains.
    if (keys := sorted(k for k in _credentials(tree) if k in said)):
        return f"needs the credential(s) {', '.join(keys)} and their web service (the sandbox is offline)"
    named = {c for c in _NOT_FOUND.findall(said) if c in _strings(tree)}  # a program started from a list built earlier
    absent = sorted(c for c in _commands(tree) | named if "/" not in c and c not in ("python", "python3")
                    and shutil.which(c) is None and re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", said))
    if absent:
        return f"needs the command(s) {', '.join(absent)}, not installed here"
    if _OFFLINE.search(said) and _imports(tree) & _NETWORK_MODULES:
        return "needs the network (the sandbox is offline: the run failed to reach a host)"
    return missing_at_run(skill, stdout, stderr)


def _strings(tree: ast.Module) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _top_level_imports(tree: ast.Module) -> set[str]:
    """Imports run unconditionally when the module loads (not in a try, a function or an if)."""
    return _imports(ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))],
                               type_ignores=[]))


def missing_at_run(skill: Skill, stdout: str, stderr: str) -> str | None:
    """A run that stopped on a package it could not import that the source's imports did not show
    (imported by a helper module, or by a name built at run time); a module of the skill's own is no excuse."""
    m = _MISSING_MODULE.search(stderr) or _MISSING_MODULE.search(stdout)
    name = m.group(1).split(".")[0] if m else None
    return f"needs Python package {name}, not installed here" if name and name not in _local_modules(skill) else None
