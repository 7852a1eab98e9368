"""Skill use the way agents do it: imports, copies, globs, each harness's activation tool.

Every command string is written as the harness writes it: terminus-2 sends keystrokes
(``bash_command``, ``{"keystrokes": "...\\n"}``, no exit status), claude-code calls
``Bash`` (``{"command", "description"}``), codex ``exec_command`` (``{"cmd"}``),
gemini-cli ``run_shell_command`` / ``write_file``. The import shapes are the ones
SkillsBench's gemini-cli trials show (see the last test, on those trials).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.graders import SCRIPT, SKILL, inp, tool, traj

from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.graders.skill_execution import (
    Provenance,
    grade_skill_execution,
    script_invocations,
    skill_file_digests,
    text_digest,
)
from aces_bench.graders.tool_calls import build_view

SCRIPTS = f"/skills/{SKILL}/scripts"
MODULE = "reconcile"  # scripts/reconcile.py
SOURCE = "import csv\n\ndef reconcile(path):\n    return sum(1 for _ in csv.reader(open(path)))\n"


def keys(text: str, out: str = "$ ") -> dict:
    return tool("bash_command", {"keystrokes": text + "\n", "duration": 1.0}, out)


def claude(cmd: str, out: str = "", code: int = 0) -> dict:
    return tool("Bash", {"command": cmd, "description": "run it"}, out, {"exit_code": code})


def codex(cmd: str, out: str = "", code: int = 0) -> dict:
    return tool("exec_command", {"cmd": cmd}, out, {"exit_code": code})


def gemini(cmd: str, out: str = "", code: int = 0) -> dict:
    return tool("run_shell_command", {"command": cmd}, out, {"exit_code": code})


def execution(*calls, condition: str = "with_skill", provenance: Provenance | None = None, **kw) -> tuple[float, str]:
    t = traj(*calls)
    i = inp(t, condition=condition, **kw)
    if provenance is not None:
        i = i.model_copy(update={"skill_digests": provenance.digests, "artifacts_dir": provenance.workspace})
    r = grade_skill_execution(i, build_view(t, "/workspace"))
    detail = next(e.detail for e in r.evidence if e.check == "execution")
    return r.sub_scores["execution"], detail


@pytest.mark.parametrize("call", [
    # sys.path.append + import, in python -c (terminus-2 keystrokes, no exit status)
    keys(f"python3 -c \"import sys; sys.path.append('{SCRIPTS}'); import {MODULE}; print({MODULE}.reconcile('data/march.csv'))\"",
         "12\n$ "),
    # sys.path.insert in a heredoc fed to python (claude-code Bash)
    claude(f"python3 - <<'EOF'\nimport sys\nsys.path.insert(0, '{SCRIPTS}')\nfrom {MODULE} import reconcile\n"
           f"print(reconcile('data/march.csv'))\nEOF", "12"),
    # PYTHONPATH for one command (codex exec_command)
    codex(f"PYTHONPATH={SCRIPTS} python3 -c 'from {MODULE} import reconcile; print(reconcile(\"data/march.csv\"))'", "12"),
    # export PYTHONPATH, then python (gemini-cli run_shell_command)
    gemini(f"export PYTHONPATH={SCRIPTS}:$PYTHONPATH && python3 -c 'import {MODULE}'"),
    # python -m with the cwd in the skill folder
    claude(f"cd /skills/{SKILL} && python3 -m scripts.{MODULE} /workspace/data/march.csv", "12"),
    # from scripts.x import y, run with the cwd in the skill folder
    keys(f"cd /skills/{SKILL} && python3 -c 'from scripts.{MODULE} import reconcile; print(reconcile(\"/workspace/data/march.csv\"))'",
         "12\n$ "),
])
def test_imports_from_a_skills_scripts_are_runs_of_them(call):
    score, detail = execution(call)
    assert score == 1.0, detail
    assert f"{SCRIPTS}/{MODULE}.py" in detail


def test_a_script_the_agent_wrote_that_imports_the_skill_module_runs_it():
    # SkillsBench 3d-scan-calc (gemini-cli): write_file a driver that appends the skill's scripts dir, then run it.
    driver = (f"import sys\nsys.path.append('{SCRIPTS}')\ntry:\n    from {MODULE} import reconcile\n"
              "except ImportError as e:\n    sys.exit(1)\nprint(reconcile('data/march.csv'))\n")
    score, detail = execution(tool("write_file", {"file_path": "/workspace/run.py", "content": driver}, "ok"),
                              gemini("python3 /workspace/run.py", "12"))
    assert score == 1.0 and f"{SCRIPTS}/{MODULE}.py" in detail
    # The same driver importing a module of its own: not the skill's script.
    own = driver.replace(f"sys.path.append('{SCRIPTS}')\n", "")
    score, _ = execution(tool("write_file", {"file_path": "/workspace/run.py", "content": own}, "ok"),
                         gemini("python3 /workspace/run.py", "12"))
    assert score == 0.0


def test_importing_a_module_of_the_same_name_from_elsewhere_does_not_count():
    score, _ = execution(claude(f"python3 -c 'import sys; sys.path.append(\"/workspace/lib\"); import {MODULE}'"))
    assert score == 0.0


@pytest.mark.parametrize("calls", [
    # cp then run the copy (claude-code), in one command
    [claude(f"cp {SCRIPTS}/{MODULE}.py /tmp/r.py && python3 /tmp/r.py data/march.csv", "12")],
    # cp in one call, run in the next (terminus-2)
    [keys(f"cp /skills/{SKILL}/{SCRIPT} ./helper.py"), keys("python3 helper.py data/march.csv", "12\n$ ")],
    # the whole scripts folder copied into the workspace, a module of it run (codex)
    [codex(f"cp -r {SCRIPTS} /workspace/"), codex(f"python3 /workspace/scripts/{MODULE}.py data/march.csv", "12")],
    # cat SRC > DST, then run (gemini-cli)
    [gemini(f"cat {SCRIPTS}/{MODULE}.py > /tmp/copy.py"), gemini("python3 /tmp/copy.py data/march.csv", "12")],
    # SkillsBench dialogue-parser: cp into /app, a driver there imports it by name
    [gemini(f"cp {SCRIPTS}/{MODULE}.py /app/{MODULE}.py"),
     tool("write_file", {"file_path": "/app/solve.py", "content": f"from {MODULE} import reconcile\nprint(reconcile('x'))\n"}),
     gemini("cd /app && python3 solve.py", "12")],
])
def test_a_copy_of_the_skills_script_run_from_elsewhere_counts(calls):
    score, detail = execution(*calls)
    assert score == 1.0, detail
    assert "copied from" in detail


def test_a_copy_written_with_the_scripts_content_counts_by_hash(tmp_path):
    skill = tmp_path / SKILL
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: x\n---\n")
    (skill / SCRIPT).write_text(SOURCE)
    digests = skill_file_digests(skill, SKILL)
    assert digests == {text_digest(SOURCE): f"{SKILL}/{SCRIPT}"}
    prov = Provenance(workdir="/workspace", digests=digests)
    # The agent read the script and wrote its text out again (write tool), then ran that file.
    score, detail = execution(tool("write_file", {"file_path": "/tmp/mine.py", "content": SOURCE + "\n"}, "ok"),
                              claude("python3 /tmp/mine.py data/march.csv", "12"), provenance=prov)
    assert score == 1.0 and f"same content as {SKILL}/{SCRIPT}" in detail
    # A heredoc carrying the same text.
    score, detail = execution(keys(f"cat > /tmp/h.py << 'EOF'\n{SOURCE}EOF"), keys("python3 /tmp/h.py x", "12\n$ "),
                              provenance=prov)
    assert score == 1.0 and "same content" in detail
    # A copy made some way the trace does not show, left in the retained workspace.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tool.py").write_text(SOURCE)
    score, detail = execution(codex("python3 -c 'import shutil; shutil.copy(\"a\", \"b\")'"),
                              codex("python3 /workspace/tool.py data/march.csv", "12"),
                              provenance=Provenance(workdir="/workspace", digests=digests, workspace=ws))
    assert score == 1.0 and "same content" in detail
    # Different content: the agent's own script.
    score, _ = execution(tool("write_file", {"file_path": "/tmp/mine.py", "content": "print(12)\n"}, "ok"),
                         claude("python3 /tmp/mine.py", "12"), provenance=prov)
    assert score == 0.0


@pytest.mark.parametrize("call", [
    keys(f"python3 -c \"import sys; sys.path.append('{SCRIPTS}'); import {MODULE}\"",
         "ModuleNotFoundError: No module named 'reconcile'\n$ "),
    keys(f"cp {SCRIPTS}/{MODULE}.py /tmp/r.py && python3 /tmp/r.py", "cp: cannot stat: No such file or directory\n$ "),
    claude(f"cd /skills/{SKILL} && python3 -m scripts.{MODULE}", "No such file or directory", 1),
])
def test_in_the_baseline_the_absent_targets_files_ran_nothing(call):
    # The target is not staged in the baseline: naming its files, importing or copying them, runs nothing.
    score, detail = execution(call, condition="baseline")
    assert score == 0.0 and "never invoked" in detail


def test_activation_tools_of_each_harness():
    from aces_bench.graders.skill_execution import activations

    for call in (tool("Skill", {"skill": SKILL}, "Launching skill: " + SKILL),  # claude-code
                 tool("activate_skill", {"name": SKILL}, "<activated_skill>"),  # gemini-cli
                 codex(f"sed -n '1,200p' /root/.agents/skills/{SKILL}/SKILL.md", "# Steps\n1. run it"),  # codex
                 keys("cat /skills/*/SKILL.md", f"---\nname: {SKILL}\n---\n# Steps")):  # glob
        t = traj(call)
        assert [a.skill for a in activations(build_view(t, "/workspace").calls, "/skills")] == [SKILL], call


SKILLSBENCH = Path(__file__).resolve().parents[3] / "shared" / "data" / "skillsbench" / "trials"


@pytest.mark.shared
@pytest.mark.skipif(not SKILLSBENCH.is_dir(), reason=f"../shared is absent ({SKILLSBENCH}): needs the SkillsBench trials")
@pytest.mark.parametrize(("task", "skill", "script", "how"), [
    ("3d-scan-calc", "mesh-analysis", "scripts/mesh_tool.py", "/root/.gemini/skills/mesh-analysis/scripts/mesh_tool.py"),
    ("dapt-intrusion-detection", "pcap-analysis", "pcap_utils.py", "/root/skills/pcap-analysis/pcap_utils.py"),
    ("dialogue-parser", "dialogue-graph", "scripts/dialogue_graph.py", "copied from /root/.gemini/skills/dialogue_graph"),
])
def test_real_gemini_cli_trials_import_and_copy_their_skills_scripts(task, skill, script, how):
    """SkillsBench's own gemini-cli trials: the skill arm imports or copies the script, the baseline never does."""
    for arm, found in (("skills", True), ("noskills", False)):
        loaded = load_trial_trajectory(SKILLSBENCH / arm / task)
        calls = build_view(loaded.trajectory, "/root").calls
        inv = script_invocations(calls, script, {skill}, "/skills", absent=None if found else skill)
        assert bool(inv) is found, (arm, task)
        if found:
            assert how in inv[0][1]
