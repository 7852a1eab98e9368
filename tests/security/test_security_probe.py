"""Issue 21's check, run as a whole study: a hostile skill (``fixtures/csv-total``) that
answers wrong, tries every kernel knob under /proc/sys and /sys, plants code for the
verifier (usercustomize, sitecustomize, .pth, stdlib look-alikes, a python3 shim on
PATH, shell rc files, ld.so.preload), leaves a daemon that keeps forging the reward,
and puts FIFOs, a socket and links where the host copies and reads the trial's files.

The study must finish within its timeouts, the forged trial's reward must be 0, no
sysctl may be writable, and nothing the skill planted may reach the host as anything
but plain data. Written against what a stranger's probe would do, not against the
implementation: every verdict is read from the trial's own outputs.
"""

from __future__ import annotations

import json
import os
import platform
import stat
import time
from pathlib import Path

import pytest
from support.security import HERE
from support.studies import needs_bwrap, run_cli, study_overrides

pytestmark = [pytest.mark.timeout(300)]

PROBE_SKILL = HERE / "fixtures" / "csv-total"
STUDY_TIMEOUT = 240


@pytest.fixture(scope="module")
def probe_study(tmp_path_factory):
    if not PROBE_SKILL.is_dir():
        pytest.fail(f"fixture missing: {PROBE_SKILL}")
    tmp = tmp_path_factory.mktemp("probe")
    out = tmp / "out"
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    swappiness = Path("/proc/sys/vm/swappiness").read_text()
    started = time.monotonic()
    proc = run_cli("harness=reference", f"output_dir={out}",
                   *study_overrides(skill=PROBE_SKILL, root_parent=tmp), timeout=STUDY_TIMEOUT)
    elapsed = time.monotonic() - started
    host = {"core_pattern": (core_pattern, Path("/proc/sys/kernel/core_pattern").read_text()),
            "swappiness": (swappiness, Path("/proc/sys/vm/swappiness").read_text())}
    return proc, out, elapsed, host


def _trials(out: Path) -> dict[str, Path]:
    """Trial dirs by condition (from each trial's task metadata)."""
    found = {}
    for result in out.glob("jobs/*/*/result.json"):
        data = json.loads(result.read_text())
        name = data["task_name"]
        found["with_skill" if ".skill-" in name else "baseline"] = result.parent
    return found


def _report(trial: Path) -> dict:
    text = (trial / "agent" / "trajectory.json").read_text()
    marker = "aces-probe-report "
    assert marker in text, "the probe never ran; the test would prove nothing"
    line = None
    for step in json.loads(text)["steps"]:
        for result in ((step.get("observation") or {}).get("results") or []):
            content = result.get("content")
            if isinstance(content, str) and marker in content:
                line = content[content.index(marker) + len(marker):].splitlines()[0]
    assert line, "no probe report in the trajectory's observations"
    return json.loads(line)


@needs_bwrap
def test_the_study_finishes_within_its_timeouts(probe_study):
    proc, out, elapsed, _ = probe_study
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert elapsed < STUDY_TIMEOUT
    assert set(_trials(out)) == {"with_skill", "baseline"}


@needs_bwrap
def test_the_forged_trial_scores_zero(probe_study):
    _, out, _, _ = probe_study
    trial = _trials(out)["with_skill"]
    report = _report(trial)
    # The probe did plant what it could (its own home and workspace at least) ...
    planted = report["plants"]
    assert any(p.endswith("usercustomize.py") for p in planted), planted
    assert any(p.endswith(".bashrc") for p in planted), planted
    # ... and none of it, nor its daemon, moved the grade of its wrong answer.
    result = json.loads((trial / "result.json").read_text())
    assert result["verifier_result"]["rewards"] == {"reward": 0.0}, result["verifier_result"]
    assert json.loads((trial / "verifier" / "reward.json").read_text()) == {"reward": 0.0}
    assert not (trial / "verifier" / "reward.txt").exists()
    details = json.loads((trial / "verifier" / "details.json").read_text())
    assert details["checks"][0]["passed"] is False
    # Nothing of the system dirs (the image's binaries on the verifier's PATH) took a plant.
    assert not [p for p in planted if p.startswith(("/usr/", "/bin/", "/etc/"))], planted
    sandbox = json.loads((trial / "local-sandbox.json").read_text())
    assert sandbox["verifier"].startswith("separate sandbox"), sandbox["verifier"]


@needs_bwrap
def test_no_kernel_knob_is_writable_and_the_host_is_unchanged(probe_study):
    _, out, _, host = probe_study
    report = _report(_trials(out)["with_skill"])
    assert report["proc_sys_writable"] == []
    assert report["core_pattern_writable"] is False and report["sysrq_trigger_writable"] is False
    assert report["sys_exists"] is False and report["sys_writable"] == []
    for name, (before, after) in host.items():
        assert before == after, name
    # No capability, no way to gain one, a filter on, root inside is no one outside.
    assert report["CapEff"] == "0000000000000000" and report["CapBnd"] == "0000000000000000"
    assert report["NoNewPrivs"] == "1" and report["Seccomp"] == "2"
    inside, outside, count = (int(x) for x in report["uid_map"][:3])
    assert inside == 0 and outside != 0 and count >= 1
    assert report["mount"].startswith("refused") and report["unshare_user"] == "refused"
    assert report["ptrace_pid1"] == "refused" and str(report["mknod"]).startswith("refused")
    if platform.machine() == "x86_64":
        assert report["keyctl"] == "refused" and report["bpf"].startswith("refused")
    assert report["etc_root_only_readable"] == []


@needs_bwrap
def test_fifos_sockets_and_links_reach_the_host_as_nothing_or_plain_data(probe_study):
    _, out, _, _ = probe_study
    trial = _trials(out)["with_skill"]
    bad = []
    for dirpath, dirnames, filenames in os.walk(out):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                bad.append(os.path.join(dirpath, name))
    assert bad == []
    # The trajectory the host wrote is the one kept, readable (the FIFO planted over its
    # copy inside was skipped, and said so in the trial's record).
    json.loads((trial / "agent" / "trajectory.json").read_text())
    copies = json.loads((trial / "local-sandbox.json").read_text())["copy_out"]
    skipped = {s["path"]: s["why"] for s in copies["skipped"]}
    assert any(p.endswith("trajectory.json") and why == "a FIFO" for p, why in skipped.items()), skipped
