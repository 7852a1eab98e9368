"""Finding 9 (the output side) and point 7: a full disk or a read-only output folder is a
one-line error (file, cause, fix) in every command that writes, never a traceback.

Each command runs in its own mount namespace (``unshare -m``) over a real tmpfs: 64 KiB
(a full disk, ENOSPC) or mounted read-only (EROFS), so nothing of the host changes. As
root a chmod'ed folder is still writable, so permissions are not how EROFS is made.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from security_support import HOSTILE_SKILL

from harness_support import ROOT, cli_argv, cli_env, needs_bwrap, run_cli, study_overrides  # isort: skip

pytestmark = [pytest.mark.timeout(300)]

MOUNTS = {"full": "-o size=4k", "read-only": "-o ro"}  # 4 KiB: one page, full after the first small file
# The cause as the one line gives it: OutputError's wording, or a command's own earlier
# check of its output folder (scan's --out, the study's output_dir), which is one line too.
CAUSE = {"full": ("no space left on the device (ENOSPC)",),
         "read-only": ("the folder is on a read-only file system (EROFS)", "is not writable", "Read-only file system")}


def _can_mount() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"cannot mount a tmpfs in a mount namespace: {probe.stderr.strip()}"


needs_mount = pytest.mark.skipif(_can_mount() is not None, reason=str(_can_mount()))


def run_on(kind: str, mount: Path, *args: str, prepare: str = "") -> subprocess.CompletedProcess:
    """``aces-bench args`` with ``mount`` a full or read-only tmpfs, in a private mount namespace."""
    mount.mkdir(parents=True, exist_ok=True)
    script = (f"mount -t tmpfs {MOUNTS[kind]} tmpfs {shlex.quote(str(mount))} && {prepare}"
              f"exec {shlex.join(cli_argv(*args))}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=ROOT, env=cli_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=240, check=False)


def assert_one_line(proc: subprocess.CompletedProcess, kind: str, where: Path) -> None:
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert str(where) in errors[0] and any(c in errors[0] for c in CAUSE[kind]), errors[0]
    assert "  fix: " in proc.stderr


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("study")
    out = tmp / "out"
    proc = run_cli("harness=reference", f"output_dir={out}", *study_overrides(skill=HOSTILE_SKILL, root_parent=tmp),
                   timeout=200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return out


@needs_mount
@needs_bwrap
@pytest.mark.parametrize("kind", sorted(MOUNTS))
def test_report(study, tmp_path, kind):
    mount = tmp_path / "mnt"
    assert_one_line(run_on(kind, mount, "report", str(study), "--out", str(mount / "report")), kind, mount)


@needs_mount
@needs_bwrap
@pytest.mark.parametrize("kind", sorted(MOUNTS))
def test_grade(study, tmp_path, kind):
    mount = tmp_path / "mnt"
    [job] = [p for p in (study / "jobs").iterdir() if p.is_dir()]
    assert_one_line(run_on(kind, mount, "grade", str(job), "--out", str(mount / "grades")), kind, mount)


@needs_mount
@pytest.mark.parametrize("kind", sorted(MOUNTS))
def test_scan(tmp_path, kind):
    mount = tmp_path / "mnt"
    assert_one_line(run_on(kind, mount, "scan", str(HOSTILE_SKILL), "--out", str(mount / "scan")), kind, mount)


@needs_mount
@pytest.mark.parametrize("kind", sorted(MOUNTS))
def test_study(tmp_path, kind):
    mount = tmp_path / "mnt"
    proc = run_on(kind, mount, "harness=reference", f"output_dir={mount / 'out'}",
                  *study_overrides(skill=HOSTILE_SKILL, root_parent=tmp_path))
    assert_one_line(proc, kind, mount)


@needs_mount
def test_dataset_create_into_a_read_only_skill(tmp_path):
    mount = tmp_path / "mnt"
    src = tmp_path / "src" / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, src)
    (src / "evals" / "evals.json").unlink()
    skill = mount / "hostile-colsum"
    # The skill is copied in, then the tmpfs remounted read-only: create must write evals.json.
    prepare = (f"cp -r {shlex.quote(str(src))} {shlex.quote(str(mount))}/ && "
               f"mount -o remount,ro {shlex.quote(str(mount))} && ")
    mount.mkdir(parents=True, exist_ok=True)
    script = (f"mount -t tmpfs tmpfs {shlex.quote(str(mount))} && {prepare}"
              f"exec {shlex.join(cli_argv('dataset', 'create', str(skill)))}")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=ROOT, env=cli_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=240, check=False)
    assert_one_line(proc, "read-only", skill)


@needs_mount
@pytest.mark.parametrize("kind", sorted(MOUNTS))
def test_trigger(tmp_path, kind):
    mount = tmp_path / "mnt"
    queries = tmp_path / "queries.json"
    queries.write_text('[{"query": "Sum the amount column of sales.csv", "should_trigger": true}, '
                       '{"query": "Translate this poem into French", "should_trigger": false}]')
    proc = run_on(kind, mount, "trigger", str(HOSTILE_SKILL), "--router", "--queries", str(queries),
                  "--json", str(mount / "trigger.json"), "--html", str(mount / "trigger.html"))
    assert_one_line(proc, kind, mount)
