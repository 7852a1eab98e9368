"""Atomic writes for every artifact aces-bench produces.

A reader never sees a half-written file: each writer goes to a temp file in the
same folder, fsyncs it and ``os.replace``-s it over the target.
"""

from __future__ import annotations

import errno
import functools
import itertools
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aces_bench.core.errors import output_error


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


def remove_tree(path: str | Path, *, ignore_errors: bool = False) -> None:
    """Remove ``path`` (a folder tree, a file or a link), however deep; links are removed, never followed.

    For trees a sandbox or a skill wrote. ``shutil.rmtree`` recurses once per level on
    Python 3.12, so one ``mkdir d && cd d`` loop a few thousand levels deep makes it
    raise RecursionError, which ``ignore_errors`` does not catch. This walk holds at
    most three descriptors and no path longer than one name: it moves every grandchild
    folder up into ``path`` (a rename within the tree) and deletes the rest, so depth
    costs renames, not stack, descriptors or PATH_MAX. Every step names one entry
    relative to an open folder, opened with ``O_NOFOLLOW``: a folder a racing process
    swaps for a link makes that step fail, never reach outside. A folder the sandbox made
    unreadable (0000, 0500) is made 0700 first, through a descriptor of that very folder.
    A mount point inside the tree (another file system, or a bind mount of the same
    one) is never entered: it is an error, like anything else that cannot be removed.
    Errors raise the first OSError; with ``ignore_errors`` what can be removed is, and
    the rest (a mount point, a busy or immutable file) stays, silently.
    """
    remove_tree_at(None, os.fspath(path), ignore_errors=ignore_errors)


def remove_tree_at(dir_fd: int | None, name: str, *, ignore_errors: bool = False) -> None:
    """``remove_tree`` for entry ``name`` of the folder open as ``dir_fd`` (None: ``name`` is
    a path): for a walk that holds the parent open and whose path may be longer than PATH_MAX."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=dir_fd)
            return
        fd = _open_dir_at(name, dir_fd)
        try:
            _make_writable(fd)
            _empty_dir_fd(fd, ignore_errors=ignore_errors)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return  # nothing there, or removed meanwhile by someone else
    except OSError:
        if not ignore_errors:
            raise


def _mount_id(fd: int) -> tuple[str, int]:
    """Which mount the folder open as ``fd`` is on: its mount id (``/proc/self/fdinfo``,
    which tells a bind mount of the same file system apart), else its device."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", "rb") as fh:
            for line in fh:
                if line.startswith(b"mnt_id:"):
                    return ("mnt", int(line.split()[1]))
    except OSError:
        pass
    return ("dev", os.fstat(fd).st_dev)


def _make_writable(fd: int) -> None:
    """Give the folder open as ``fd`` u+rwx, so its entries can be listed and removed."""
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & 0o700 != 0o700:
        os.fchmod(fd, mode | 0o700)


def _open_dir_at(name: str, dir_fd: int | None) -> int:
    """Open folder ``name`` in ``dir_fd`` for listing, never following a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:  # a folder the sandbox made 0000 (only a non-root host meets this)
        _chmod_dir_at(name, dir_fd)
        return os.open(name, flags, dir_fd=dir_fd)


def _chmod_dir_at(name: str, dir_fd: int | None) -> None:
    """Make folder ``name`` in ``dir_fd`` 0700. chmod by name would follow a link swapped
    in meanwhile: this changes the folder an ``O_PATH | O_NOFOLLOW`` descriptor holds
    (through its /proc link), so a link there fails to open instead."""
    held = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        os.chmod(f"/proc/self/fd/{held}", 0o700)
    finally:
        os.close(held)


def _empty_dir_fd(top: int, *, ignore_errors: bool) -> None:
    """Empty the folder open as ``top`` (see ``remove_tree``): flatten one level per pass.

    A folder with something that failed (only with ``ignore_errors``) is skipped in later
    passes, so the walk ends; a moved folder never takes a name already in ``top``.
    """
    mount = _mount_id(top)
    names_taken = itertools.count(1)
    skipped: set[str] = set()
    while names := [n for n in os.listdir(top) if n not in skipped]:
        for name in names:
            try:
                if not stat.S_ISDIR(os.stat(name, dir_fd=top, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=top)
                    continue
                child = _open_dir_at(name, top)
                try:
                    if _mount_id(child) != mount:
                        raise OSError(errno.EXDEV, "a mount point inside the tree: not entered", name)
                    _make_writable(child)
                    failed = _lift_children(child, top, names_taken, ignore_errors=ignore_errors)
                finally:
                    os.close(child)
                if failed:
                    skipped.add(name)
                else:
                    os.rmdir(name, dir_fd=top)
            except FileNotFoundError:
                continue  # gone meanwhile
            except OSError as exc:
                if exc.errno == errno.ENOTEMPTY:
                    continue  # written to meanwhile: the next pass takes it again
                if not ignore_errors:
                    raise
                skipped.add(name)


def _lift_children(child: int, top: int, names_taken: Iterator[int], *, ignore_errors: bool) -> bool:
    """Unlink what is not a folder in ``child``; move its folders up into ``top`` under
    fresh names. Whether anything failed (only with ``ignore_errors``: a mount point)."""
    failed = False
    for sub in os.listdir(child):
        try:
            mode = os.stat(sub, dir_fd=child, follow_symlinks=False).st_mode
            if not stat.S_ISDIR(mode):
                os.unlink(sub, dir_fd=child)
                continue
            if mode & 0o200 == 0:
                _chmod_dir_at(sub, child)  # moving a folder rewrites its "..": it must be writable
            moved = next(f".aces-rm-{n}" for n in names_taken if not _exists_at(f".aces-rm-{n}", top))
            os.rename(sub, moved, src_dir_fd=child, dst_dir_fd=top)  # a mount point: EBUSY
        except FileNotFoundError:
            continue
        except OSError:
            if not ignore_errors:
                raise
            failed = True
    return failed


def _exists_at(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
