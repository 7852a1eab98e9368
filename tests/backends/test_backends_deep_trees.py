"""A folder tree nested thousands of levels deep, as a hostile skill leaves it (one
``mkdir d && cd d`` loop), is removed by the host like any other.

``shutil.rmtree`` recurses once per level on Python 3.12: past ~1000 levels it raises
RecursionError, which ``ignore_errors=True`` does not catch. Found by a held-out probe
(review of issue 21): the trial errored in teardown, its private root stayed on the
host, and every later study on the machine then failed at the orphan sweep with
RecursionError, before running a single trial.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.backends import make_env, started, sync

from aces_bench.backends.local import ROOT_PREFIX, sweep_orphaned_roots
from aces_bench.core.io import remove_tree

DEPTH = 3000  # past the recursion limit, and its path (6,000 bytes) past PATH_MAX


def _deep_chain(top: Path, depth: int = DEPTH) -> None:
    """``top/d/d/.../d/leaf`` ``depth`` levels down, made through directory descriptors."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
        os.mkfifo("pipe", dir_fd=fd)
    finally:
        os.close(fd)


@pytest.fixture(autouse=True)
def _no_deep_leftovers(tmp_path):
    """Whatever a test leaves under tmp_path goes with GNU rm (iterative), even when the
    code under test failed: pytest's own clean-up of old tmp dirs is shutil.rmtree and
    would raise RecursionError on it in a later session."""
    yield
    subprocess.run(["rm", "-rf", "--one-file-system", str(tmp_path)], check=False)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_remove_tree_removes_a_tree_past_the_recursion_limit_and_path_max(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("host file")
    tree = tmp_path / "tree"
    _deep_chain(tree / "a")
    _deep_chain(tree / "b", 50)
    (tree / "b" / "to-host").symlink_to(outside)  # removed, never followed
    (tree / "file.txt").write_text("x")
    remove_tree(tree)
    assert not os.path.lexists(tree)
    assert (outside / "keep.txt").read_text() == "host file"


def test_remove_tree_on_a_file_a_link_or_nothing(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "f").write_text("x")
    (tmp_path / "link").symlink_to(target)
    remove_tree(tmp_path / "f")
    remove_tree(tmp_path / "link")
    remove_tree(tmp_path / "missing")
    assert not os.path.lexists(tmp_path / "f") and not os.path.lexists(tmp_path / "link")
    assert target.is_dir()


def test_the_orphan_sweep_removes_a_deep_root_left_by_a_killed_run(tmp_path):
    parent = tmp_path / "roots"
    root = parent / f"{ROOT_PREFIX}{_dead_pid()}-deep"
    _deep_chain(root / "workspace")
    assert sweep_orphaned_roots(str(parent)) == 1
    assert not os.path.lexists(root)


def _remove_in_child(tree: Path, *, ignore_errors: bool, prefix: tuple[str, ...] = (), setup: str = "") -> str:
    """Run ``remove_tree(tree)`` in a child python (after ``setup`` in ``sh``, behind
    ``prefix``); its printed outcome: "removed", "left" or the OSError's errno name."""
    code = ("import errno, os, sys\nfrom aces_bench.core.io import remove_tree\n"
            f"try: remove_tree(sys.argv[1], ignore_errors={ignore_errors})\n"
            "except OSError as e: print(errno.errorcode[e.errno]); sys.exit()\n"
            "print('left' if os.path.lexists(sys.argv[1]) else 'removed')")
    argv = [sys.executable, "-c", code, str(tree)]
    if setup:
        argv = ["sh", "-c", f'{setup} && exec "$@"', "sh", *argv]
    argv = [*prefix, *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_remove_tree_takes_special_files_and_names_that_collide_with_its_own(tmp_path):
    """FIFOs and sockets are unlinked, never opened; names like the walk's own
    ``.aces-rm-N`` (a file, a folder, a link) are planted at every level."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("host file")
    tree = tmp_path / "tree"
    level = tree
    for depth in range(40):
        level.mkdir(parents=True)
        (level / ".aces-rm-1").write_text("planted")
        (level / f".aces-rm-{depth + 2}").mkdir()
        (level / f".aces-rm-{depth + 2}" / "x").write_text("x")
        if depth % 2:
            (level / f".aces-rm-{depth + 60}").symlink_to(outside)
        os.mkfifo(level / "pipe")
        level = level / "d"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tree / "sock"))
        remove_tree(tree)
    assert not os.path.lexists(tree)
    assert (outside / "keep.txt").read_text() == "host file"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="drops root's permission override with setpriv: needs root and util-linux")
def test_remove_tree_takes_folders_the_sandbox_made_unreadable_or_read_only(tmp_path):
    """A non-root host (root without its permission override here) meets a 0000 folder
    it cannot list and a 0500 one it cannot delete from: both are made 0700 first."""
    tree = tmp_path / "tree"
    _deep_chain(tree, 1200)
    (tree / "shut" / "in").mkdir(parents=True)
    (tree / "shut" / "in" / "f").write_text("x")
    (tree / "ro").mkdir()
    (tree / "ro" / "f").write_text("x")
    os.chmod(tree / "shut" / "in", 0o000)
    os.chmod(tree / "shut", 0o000)
    os.chmod(tree / "ro", 0o500)
    os.chmod(tree / "d" / "d", 0o300)
    os.chmod(tree, 0o500)
    no_override = ("setpriv", "--inh-caps=-dac_override,-dac_read_search",
                   "--bounding-set=-dac_override,-dac_read_search")
    assert _remove_in_child(tree, ignore_errors=False, prefix=no_override) == "removed"


def _can_bind_mount() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind / /mnt"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"cannot bind-mount in a mount namespace: {probe.stderr.strip()}"


@pytest.mark.skipif(_can_bind_mount() is not None, reason=str(_can_bind_mount()))
@pytest.mark.parametrize("ignore_errors", [False, True])
def test_remove_tree_never_enters_a_mount_point_in_the_tree(tmp_path, ignore_errors):
    """Bind mounts of a host folder (the same file system: st_dev alone cannot tell) and
    a tmpfs, one right under the tree and two below a deep chain, made in a private
    mount namespace: their contents stay. Without ``ignore_errors`` the walk stops with
    EXDEV (a mount it would enter) or EBUSY (one it would move); with it, all else goes."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "keep.txt").write_text("host file")
    tree = tmp_path / "tree"
    _deep_chain(tree / "a", 30)
    for d in (tree / "a" / "d" / "bound", tree / "b" / "tmp", tree / "top"):
        d.mkdir(parents=True)
    (tree / "c.txt").write_text("x")
    t = shlex.quote(str(tree))
    setup = (f"mount --bind {shlex.quote(str(host))} {t}/a/d/bound && mount --bind {shlex.quote(str(host))} {t}/top"
             f" && mount -t tmpfs tmpfs {t}/b/tmp && echo tmpfs-file > {t}/b/tmp/keep && test -f {t}/top/keep.txt")
    # "left" is checked inside the namespace, where the mounts still are
    outcome = _remove_in_child(tree, ignore_errors=ignore_errors, prefix=("unshare", "-m"), setup=setup)
    assert not [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(tmp_path) in line]
    assert (host / "keep.txt").read_text() == "host file"
    if ignore_errors:
        assert outcome == "left"
        left = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
        assert len(left) == 5 and {"b", "b/tmp", "top"} <= set(left), left  # and .aces-rm-N/bound
        assert all(Path(p).name in ("bound", "tmp", "top") or (tree / p / "bound").exists() or p == "b" for p in left)
    else:
        assert outcome in ("EXDEV", "EBUSY")


def test_remove_tree_stays_in_the_tree_while_a_racer_swaps_folders_for_links(tmp_path):
    """A process still running in the tree keeps swapping a folder for a link to a host
    folder: the walk may fail on a swapped name, but never removes through the link."""
    host = tmp_path / "host"
    host.mkdir()
    for i in range(50):
        (host / f"keep-{i}").mkdir()
        (host / f"keep-{i}" / "f").write_text("host file")
    for attempt in range(5):
        tree = tmp_path / f"tree-{attempt}"
        for i in range(50):
            (tree / f"s{i}" / "inner" / "deeper").mkdir(parents=True)
            (tree / f"s{i}" / "inner" / "deeper" / "f").write_text("x")
        stop = threading.Event()

        def race(tree=tree, stop=stop):
            while not stop.is_set():
                for i in range(50):
                    for name in (tree / f"s{i}", tree / f"s{i}" / "inner", tree / ".aces-rm-1"):
                        try:
                            os.rename(name, name.with_name(name.name + ".old"))
                            os.symlink(host, name)
                        except OSError:
                            pass

        racer = threading.Thread(target=race)
        racer.start()
        try:
            remove_tree(tree, ignore_errors=True)
        finally:
            stop.set()
            racer.join()
        remove_tree(tree)
        assert not os.path.lexists(tree)
    assert sorted(p.name for p in host.iterdir()) == sorted(f"keep-{i}" for i in range(50))
    assert all((host / f"keep-{i}" / "f").read_text() == "host file" for i in range(50))


@pytest.mark.sandbox
@pytest.mark.timeout(120)
@sync
async def test_a_deep_tree_made_inside_the_sandbox_is_removed_at_stop(tmp_path):
    env = make_env(tmp_path)
    async with started(env):
        made = await env.exec("python3 -c 'import os\nos.chdir(\"/workspace\")\n"
                              f"for _ in range({DEPTH}): os.mkdir(\"d\"); os.chdir(\"d\")\nprint(\"made\")'")
        assert made.stdout == "made\n", made
        root = env.private_root
    # stop(delete=True) ran in started(): it must neither raise nor leave the root behind
    assert root is not None and not os.path.lexists(root)


def test_copy_out_sanitising_a_deep_tree_keeps_64_levels_and_removes_the_rest(tmp_path):
    """The same loop left in a trial's own /logs folder: the host makes it plain data at
    stop (backends/copyout.sanitize_tree), which walked one frame per level and raised
    RecursionError in the trial's teardown. Levels past MAX_DEPTH go, the rest is kept
    and made plain, nothing outside the tree is touched."""
    from aces_bench.backends.copyout import MAX_DEPTH, sanitize_tree

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("host file")
    top = tmp_path / "logs"
    _deep_chain(top)
    (top / "d" / "answer.txt").write_text("42")
    os.chmod(top / "d" / "answer.txt", 0o4777)
    os.symlink(outside, top / "d" / "out")

    done = sanitize_tree(top)

    assert (top / "d" / "answer.txt").read_text() == "42"
    assert (top / "d" / "answer.txt").stat().st_mode & 0o7777 == 0o755
    assert not os.path.lexists(top / "d" / "out")
    assert (outside / "keep").read_text() == "host file"
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    levels = 0
    try:
        while "d" in os.listdir(fd):
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, levels = child, levels + 1
    finally:
        os.close(fd)
    assert levels == MAX_DEPTH
    assert any(f"nested deeper than {MAX_DEPTH} levels" in r for r in done.removed)
