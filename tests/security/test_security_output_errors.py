"""Finding 9 (the output side) and point 7: a full disk or a read-only output folder is a
one-line error (file, cause, fix) in every command that writes, never a traceback.

Each command runs in its own mount namespace (``unshare -m``) over a real tmpfs: 64 KiB
(a full disk, ENOSPC) or mounted read-only (EROFS), so nothing of the host changes. As
root a chmod'ed folder is still writable, so permissions are not how EROFS is made.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from support.security import HOSTILE_SKILL
from support.studies import ROOT, cli_argv, cli_env, needs_bwrap, run_cli, study_overrides

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


@needs_mount
@needs_bwrap
def test_study_whose_disk_fills_while_its_trials_run(tmp_path):
    """The disk fills after the study started (review of issue 21): the trials' own writes
    (Harbor's trial files, the reference agent's trajectory) fail inside Harbor's task
    group, which ended in a 200-line ExceptionGroup traceback, exit 1. The tasks are
    emitted first on a roomy tmpfs, which is then shrunk to what they use plus a few KiB."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    out = mount / "out"
    # Every case of an example skill (8 trials): several are cancelled when the disk fills,
    # and Harbor's per-trial log file then fails to flush as well.
    study = ["harness=reference", f"output_dir={out}",
             *study_overrides(skill=ROOT / "aces_bench" / "examples" / "skills" / "semver-bump", cases=(),
                              root_parent=tmp_path)]
    m = shlex.quote(str(mount))
    script = (f"mount -t tmpfs -o size=64m tmpfs {m} && "
              f"{shlex.join(cli_argv(*study, 'emit_only=true'))} >/dev/null 2>&1 && "
              f"used=$(df -k --output=used {m} | tail -1) && mount -o remount,size=$((used + 24))k {m} && "
              f"exec {shlex.join(cli_argv(*study))}")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=ROOT, env=cli_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=240, check=False)
    assert "to run" in proc.stderr, "the study never reached its trials: " + proc.stderr[-3000:]
    assert_one_line(proc, "full", out)


def _raised_while_handling(first: BaseException, then: BaseException) -> BaseException:
    try:
        try:
            raise first
        except BaseException:
            raise then  # noqa: B904 (Harbor does this: the context is the cause)
    except BaseException as exc:
        return exc


def test_write_failure_finds_a_full_disk_deep_in_the_group_and_not_a_refused_operation(tmp_path):
    """What the study's one line is made from: a full disk two contexts down a nested
    group; a permission error only on a file in the output folder (a sandbox's or a
    cgroup's refused operation is not an unwritable output folder)."""
    import errno

    from aces_bench.core.errors import OutputError
    from aces_bench.run.runner import write_failure

    out = tmp_path / "out"
    full = OSError(errno.ENOSPC, "No space left on device", str(out / "job" / "t1" / "result.json"))
    deep = _raised_while_handling(_raised_while_handling(full, ValueError("flush")), RuntimeError("trial"))
    error = write_failure(ExceptionGroup("job", [ValueError("other"), ExceptionGroup("trials", [deep])]), where=out)
    assert isinstance(error, OutputError) and "ENOSPC" in str(error) and "result.json" in str(error)

    refused = PermissionError(errno.EPERM, "Operation not permitted", "/sys/fs/cgroup/aces/cgroup.procs")
    assert write_failure(ExceptionGroup("job", [refused]), where=out) is None
    unwritable = PermissionError(errno.EACCES, "Permission denied", str(out / "job" / "config.json"))
    error = write_failure(ExceptionGroup("job", [refused, unwritable]), where=out)
    assert isinstance(error, OutputError) and "EACCES" in str(error) and "config.json" in str(error)
    assert write_failure(ExceptionGroup("job", [ValueError("a bug")]), where=out) is None


@needs_mount
def test_study_whose_hydra_run_dir_is_read_only(tmp_path):
    """Issue 35: Hydra's own log file (<run dir>/cli.log) on a read-only folder was a
    62-line traceback (logging.config wraps the OSError in a ValueError)."""
    mount = tmp_path / "mnt"
    proc = run_on("read-only", mount, "harness=reference", f"hydra.run.dir={mount}",
                  *study_overrides(skill=HOSTILE_SKILL, root_parent=tmp_path))
    assert_one_line(proc, "read-only", mount)


# The lowest write helper failing as a full disk or a refused permission would: every
# command that writes through it must end in one line naming the file and the cause.
LOW_LEVEL = {"permission": (errno.EACCES, "permission denied (EACCES)"),
             "full": (errno.ENOSPC, "no space left on the device (ENOSPC)")}


@pytest.mark.parametrize("kind", sorted(LOW_LEVEL))
@pytest.mark.parametrize("command", ["scan", "trigger", "dataset"])
def test_every_write_helper_failure_is_one_line(tmp_path, monkeypatch, capsys, kind, command):
    from aces_bench import cli
    from aces_bench.core import io

    code, cause = LOW_LEVEL[kind]

    def refuse(path, write):
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(io, "_atomic", refuse)
    skill = tmp_path / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    queries = tmp_path / "queries.json"
    queries.write_text('[{"query": "Sum the amount column of sales.csv", "should_trigger": true}]')
    argv = {"scan": ["scan", str(skill), "--out", str(tmp_path / "scan")],
            "trigger": ["trigger", str(skill), "--router", "--queries", str(queries), "--json",
                        str(tmp_path / "t.json")],
            "dataset": ["dataset", "create", str(skill), "--force"]}[command]
    if command == "dataset":
        (skill / "evals" / "evals.json").unlink()
        argv = argv[:-1]
    rc = cli.main(argv)
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert rc == 2 and "Traceback" not in err, err[-3000:]
    assert len(errors) == 1 and cause in errors[0] and str(tmp_path) in errors[0], err
    assert "  fix: " in err
