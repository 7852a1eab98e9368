"""A whole study with a hostile skill (``fixtures/hostile-colsum``), run once per module.

Finding 1: a canary exported on the host must be in no process environment inside the
sandbox (PID 1 and entered commands, read from the host) and in no file under the
output folder, trajectories included. Finding 2: nothing the skill planted may come
out setuid/setgid, as a link, FIFO or device, or world-writable.
"""

from __future__ import annotations

import os
import stat

import pytest
from support.backends import make_env, processes_in_namespace, started, sync
from support.security import CANARIES, HOSTILE_SKILL, environ_of, files_containing
from support.studies import needs_bwrap, run_cli, study_overrides

pytestmark = [pytest.mark.timeout(240)]


@needs_bwrap
@sync
async def test_no_host_variable_in_any_sandbox_process(tmp_path, monkeypatch):
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    async with started(make_env(tmp_path)) as env:
        # A background job keeps an entered command alive while the host looks at it.
        await env.exec("nohup sleep 30 >/dev/null 2>&1 &")
        inside = await env.exec(
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; env; cat ~/.aws/* 2>/dev/null; true"
        )
        pids = processes_in_namespace(env.sandbox.pid_namespace)
        environs = {pid: environ_of(pid) for pid in pids}
        init = env.sandbox.pid
    assert init in pids and len(pids) >= 3, pids  # init, payload, sleep
    for pid, text in environs.items():
        for name, value in CANARIES.items():
            assert value.encode() not in text, f"{name} is in the environment of sandbox pid {pid}"
            assert f"{name}=".encode() not in text, f"{name} is set in sandbox pid {pid}"
    out = inside.stdout or ""
    assert "PATH=" in out and "HOME=/root" in out  # the probe did read environments
    assert not [v for v in CANARIES.values() if v in out]


@needs_bwrap
@sync
async def test_host_secret_files_are_not_readable_inside(tmp_path):
    """Finding 10: root inside has CAP_DAC_OVERRIDE over the read-only /etc."""
    async with started(make_env(tmp_path)) as env:
        shadow = await env.exec("cat /etc/shadow")
        passwd = await env.exec("head -n 1 /etc/passwd")
        private = await env.exec("ls -A /etc/ssl/private 2>/dev/null | wc -l")
    assert shadow.return_code != 0 and not shadow.stdout, shadow
    assert passwd.return_code == 0 and passwd.stdout.startswith("root:")  # the rest of /etc is there
    assert private.stdout.strip() == "0"


@needs_bwrap
@sync
async def test_ps_inside_shows_no_host_output_path(tmp_path):
    """Finding 10: PID 1 is a fork of bwrap; its command line must not list the host binds."""
    async with started(make_env(tmp_path)) as env:
        await env.exec("nohup sleep 30 >/dev/null 2>&1 &")
        seen = await env.exec("for f in /proc/[0-9]*/cmdline; do echo \"$f: $(tr '\\0' ' ' < $f)\"; done")
        trial_dir = str(env.trial_paths.trial_dir.resolve())
    lines = (seen.stdout or "").splitlines()
    init = [ln for ln in lines if ln.startswith("/proc/1/cmdline:")]
    assert not [ln for ln in lines if trial_dir in ln or "/logs/" in ln], lines
    assert init and "bwrap" in init[0] and "--args" in init[0], lines  # the probe read PID 1
    assert any("sleep 30" in ln for ln in lines)


DISK_MB = 48


@pytest.fixture(scope="module")
def hostile_study(tmp_path_factory):
    """The hostile skill's study, run with the canaries exported on the host."""
    if not HOSTILE_SKILL.is_dir():
        pytest.fail(f"fixture missing: {HOSTILE_SKILL}")
    tmp = tmp_path_factory.mktemp("hostile")
    out = tmp / "out"
    saved = {k: os.environ.get(k) for k in CANARIES}
    os.environ.update(CANARIES)  # run_cli passes os.environ on to the study
    try:
        proc = run_cli("harness=reference", f"output_dir={out}",
                       *study_overrides(skill=HOSTILE_SKILL, root_parent=tmp, extra=(f"workspace.storage_mb={DISK_MB}",)),
                       timeout=200)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return proc, out


@needs_bwrap
def test_canary_reaches_no_file_of_a_study(hostile_study):
    """The issue's check: a study whose skill dumps every environment it can read."""
    proc, out = hostile_study
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trajectories = list(out.glob("jobs/*/*/agent/trajectory.json"))
    assert len(trajectories) == 2  # with the skill and the baseline
    dumped = [t for t in trajectories if "/proc/1/environ" in t.read_text()]
    assert dumped, "the hostile script never ran; the test would prove nothing"
    assert files_containing(out, list(CANARIES.values())) == []
    assert not [v for v in CANARIES.values() if v in proc.stdout + proc.stderr]
    # The script also tried /etc/shadow: the host's lines are nowhere either.
    if os.access("/etc/shadow", os.R_OK):
        lines = [ln for ln in open("/etc/shadow").read().splitlines() if ln.count(":") >= 8]
        assert lines and files_containing(out, lines) == []


@needs_bwrap
def test_nothing_planted_comes_out_setuid_special_or_world_writable(hostile_study):
    """The issue's check: ``find outputs -perm /6000`` finds nothing; no links, FIFOs, 0777 dirs."""
    proc, out = hostile_study
    assert proc.returncode == 0, proc.stdout + proc.stderr
    planted, bad = [], []
    for dirpath, dirnames, filenames in os.walk(out):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, out)
            if name == "suid":
                planted.append(rel)
            if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                bad.append(f"setuid/setgid: {rel}")
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                bad.append(f"special file: {rel}")
            if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o002:
                bad.append(f"world-writable dir: {rel}")
            if st.st_uid != os.getuid():
                bad.append(f"owned by uid {st.st_uid}: {rel}")
    # The plant reached the host through the binds and the retained workspace.
    assert any("logs/artifacts" in p or "artifacts" in p for p in planted), planted
    assert bad == []


@needs_bwrap
def test_a_trial_that_fills_its_disk_is_counted_and_the_report_states_the_limits(hostile_study):
    """Finding 7: the script fills /logs/artifacts past workspace.storage_mb and leaves it full.

    /logs/artifacts is a host folder of the trial: the limit must cover it (the host
    folders of every trial hold at most the limit) and the report must say so.
    """
    from aces_bench.analysis.report import build_report
    from aces_bench.records.summary import read_summary

    proc, out = hostile_study
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with_skill = [t for t in out.glob("jobs/*/*/agent/trajectory.json") if "disk: " in t.read_text()]
    assert len(with_skill) == 1, "the filling script never ran; the test would prove nothing"
    text = with_skill[0].read_text()
    assert "disk: full after " in text and "No space left on device" in text, text[-2000:]
    full_after = int(text.split("disk: full after ", 1)[1].split(" MB", 1)[0])
    assert full_after <= DISK_MB
    summary = read_summary(build_report(out, static=False).parent / "summary.json")
    assert summary.counts.n_trials == 2  # the trial with the full disk is counted, not dropped
    assert sum(summary.counts.n_by_condition.values()) == 2
    [row] = summary.limits_in_force
    assert row.n_trials == 2 and row.note is None
    assert row.disk == f"{DISK_MB} MB (tmpfs; /logs inside it, copied out)", row
    for trial in {t.parent.parent for t in out.glob("jobs/*/*/agent/trajectory.json")}:
        logs = [p for d in ("agent", "verifier", "artifacts") for p in (trial / d).rglob("*") if p.is_file()]
        assert sum(p.stat().st_size for p in logs) <= DISK_MB * 2**20, trial
    fills = list(out.glob("jobs/*/*/artifacts/**/fill"))
    assert fills and fills[0].stat().st_size <= DISK_MB * 2**20  # copied out, at most the limit
    assert row.network == "off"
    assert row.memory.startswith("2048 MB (cgroup") or row.memory == "not enforced (2048 MB asked)", row
    html = (out / "report" / "index.html").read_text()
    assert "Limits in force" in html and row.disk in html
