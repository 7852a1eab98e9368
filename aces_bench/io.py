"""Atomic writes for every artifact aces-bench produces.

A reader never sees a half-written file: each writer goes to a temp file in the
same folder, fsyncs it and ``os.replace``-s it over the target.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aces_bench.errors import output_error


def _atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """Write through a temp file; a full disk or an unwritable folder is a one-line
    OutputError naming the file (``errors.output_error``), never a traceback."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise (output_error(exc, where=path) or exc) from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        error = output_error(exc, where=path)
        if error is not None:
            raise error from None
        raise
    return path


def write_bytes(path: Path, data: bytes) -> Path:
    return _atomic(path, lambda tmp: tmp.write_bytes(data))


def write_text(path: Path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    return obj


def json_text(obj: Any, *, indent: int = 2) -> str:
    """What ``write_json`` writes (UTF-8 JSON, a newline at the end)."""
    return json.dumps(to_jsonable(obj), indent=indent, sort_keys=False, ensure_ascii=False, default=str) + "\n"


def write_json(path: Path, obj: Any, *, indent: int = 2) -> Path:
    return write_text(path, json_text(obj, indent=indent))


# A YAML document from a skill may use anchors and aliases (a shared default block), but
# what they expand to is bounded: an alias bomb ("billion laughs") is a few hundred bytes
# that construct into a structure of billions of nodes once anything walks it (json.dumps,
# hashing, pydantic). The bound is far above any real skill's frontmatter or evals file.
MAX_YAML_NODES = 100_000


@functools.cache
def _yaml_types() -> tuple[Any, type[Exception]]:
    import yaml  # not at import time: `aces-bench --help` starts without it

    class UnsafeYAMLError(yaml.MarkedYAMLError):
        """A YAML document refused for its shape (an alias bomb, a recursive alias, deep nesting)."""

    return yaml, UnsafeYAMLError


def _check_expansion(root: Any, yaml: Any, error: type[Exception]) -> None:
    """Refuse a composed node graph whose expansion exceeds the bounds, or that refers to itself.

    Aliases share node objects, so the graph is small however large its expansion:
    the expanded size is counted per distinct node (memoised), never by expanding.
    """
    size: dict[int, int] = {}
    on_path: set[int] = set()

    def count(node: Any) -> int:
        key = id(node)
        if key in size:
            return size[key]
        if key in on_path:
            raise error(None, None, "a YAML alias refers to a node that contains it (a recursive alias)",
                        node.start_mark)
        total = 1
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            on_path.add(key)
            children = node.value if isinstance(node, yaml.SequenceNode) else [c for kv in node.value for c in kv]
            for child in children:
                total += count(child)
                if total > MAX_YAML_NODES:
                    raise error(None, None,
                                f"YAML aliases expand to more than {MAX_YAML_NODES:,} values (an alias bomb)",
                                child.start_mark)
            on_path.discard(key)
        size[key] = total
        return total

    count(root)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml's C loader where the PyYAML wheel has it, with
    aliases bounded: the same results for any real document (and ``yaml.YAMLError`` on bad
    input), about ten times faster than the pure-Python loader.

    A document whose aliases expand past ``MAX_YAML_NODES`` values or whose alias refers
    to a node containing it raises a ``yaml.MarkedYAMLError`` (its ``problem`` says which)
    before anything is constructed; so does nesting too deep to construct (libyaml itself
    stops at 1,000 levels).
    This is the one YAML loader for everything aces-bench reads.
    """
    yaml, unsafe = _yaml_types()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "*" in text:  # without an alias there is nothing to expand
            _check_expansion(node, yaml, unsafe)
        return loader.construct_document(node)
    except RecursionError:
        raise unsafe(None, None, "YAML nested too deeply", None) from None
    finally:
        loader.dispose()


def yaml_problem(exc: Exception, *, line_offset: int = 1) -> str:
    """One line for a ``yaml.YAMLError``: its problem and where (``line_offset`` is added to
    the 0-based mark, e.g. 2 for frontmatter that starts on a SKILL.md's second line)."""
    mark = getattr(exc, "problem_mark", None)
    at = f" at line {mark.line + line_offset}" if mark is not None else ""
    what = getattr(exc, "problem", None) or str(exc)
    return " ".join(f"{what}{at}".split())


def write_frame(path: Path, frame: Any, *, float_format: str | None = None) -> Path:
    """Write a pandas DataFrame as Parquet or CSV, chosen by suffix (``float_format``: CSV only)."""
    path = Path(path)
    if path.suffix == ".parquet":
        return _atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
    if path.suffix == ".csv":
        return _atomic(path, lambda tmp: frame.to_csv(tmp, index=False, float_format=float_format))
    raise ValueError(f"unsupported table format: {path.suffix}")


def write_with(path: Path, writer: Callable[[Path], None]) -> Path:
    """Atomically write through a callable that writes to a given path (figures, ...)."""
    return _atomic(path, writer)


_STAGING = ".{name}.staging-{pid}-"


def staging_dir(final: Path) -> Path:
    """A fresh empty dir beside ``final`` to build its replacement in (see ``swap_in``).

    Staging dirs left by killed processes (their pid is gone) are removed first.
    """
    final = Path(final)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkdtemp(prefix=_STAGING.format(name=final.name, pid=os.getpid()), dir=final.parent))
    except OSError as exc:
        raise (output_error(exc, where=final.parent) or exc) from None
    prefix = f".{final.name}.staging-"
    for entry in final.parent.glob(prefix + "*"):
        pid = entry.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)
    return probe


def swap_in(staging: Path, final: Path) -> Path:
    """Replace dir ``final`` by ``staging`` as a whole: readers see the old or the new one.

    Uses an atomic exchange (``renameat2(RENAME_EXCHANGE)``) where the kernel has it,
    else two renames; the old content is removed afterwards.
    """
    staging, final = Path(staging), Path(final)
    os.chmod(staging, 0o755)  # mkdtemp made it 0700
    if not final.exists():
        os.rename(staging, final)
        return final
    if _exchange(staging, final):
        shutil.rmtree(staging, ignore_errors=True)  # now holds the old content
        return final
    old = Path(tempfile.mkdtemp(prefix=_STAGING.format(name=final.name, pid=os.getpid()), dir=final.parent))
    os.rename(final, old / "old")
    os.rename(staging, final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def _exchange(a: Path, b: Path) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
