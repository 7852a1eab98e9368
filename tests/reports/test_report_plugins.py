"""A third-party plugin adds a harness, a backend, a judge, a report figure and a file reader.

The plugin is docs/extending.md's worked example, written as it stands there into a
temporary folder with an ``aces_bench.plugins`` entry point (a dist-info, as pip would
install it): aces-bench is not edited, and every check runs in a fresh process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"
ACES = Path(sys.executable).with_name("aces-bench")


def _install_plugin(root: Path) -> dict[str, str]:
    """The doc's files under ``root`` and a dist-info declaring its entry points; the environment to use it."""
    text = DOC.read_text(encoding="utf-8")
    files = re.findall(r"```python\n# (aces_demo_plugin/\w+\.py)\n(.*?)```", text, re.S)
    assert {Path(f).stem for f, _ in files} == {"harness", "backend", "judge", "figure", "reader"}
    for rel, body in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    (root / "aces_demo_plugin" / "__init__.py").write_text("", encoding="utf-8")
    toml = re.search(r'\[project\.entry-points\."aces_bench\.plugins"\]\n(.*?)```', text, re.S).group(1)
    points = dict(re.findall(r'^([\w-]+) = "([\w.:]+)"$', toml, re.M))
    assert len(points) == 5
    info = root / "aces_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: aces-demo-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[aces_bench.plugins]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()), encoding="utf-8")
    return {**os.environ, "PYTHONPATH": str(root), "HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory) -> dict[str, str]:
    return _install_plugin(tmp_path_factory.mktemp("plugin"))


def _run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_help_lists_the_plugin_harness_and_backend(plugin_env):
    done = _run([str(ACES), "--help"], plugin_env)
    assert done.returncode == 0, done.stderr
    harness = next(line for line in done.stdout.splitlines() if line.startswith("harness:"))
    backend = next(line for line in done.stdout.splitlines() if line.startswith("backend:"))
    assert "echo-agent" in re.split(r"[\s,]+", harness) and "reference" in harness
    assert "quiet-sandbox" in re.split(r"[\s,]+", backend) and "local" in backend
    without = _run([str(ACES), "--help"], {**plugin_env, "PYTHONPATH": ""})
    assert "echo-agent" not in without.stdout and "quiet-sandbox" not in without.stdout


def test_a_study_composes_with_the_plugin_harness_backend_and_judge(plugin_env, tmp_path):
    code = ("from aces_bench.config.compose import compose_spec\n"
            f"s = compose_spec(['harness=echo-agent', 'backend=quiet-sandbox', 'judge.kind=always-yes'], output_dir={str(tmp_path)!r})\n"
            "print(s.harness.import_path, s.harness.requires_model, s.backend.import_path, s.backend.is_local, s.judge.kind)\n"
            "from aces_bench.judges.factory import build_judge\n"
            "print(build_judge(s.judge).label)\n")
    done = _run([sys.executable, "-c", code], plugin_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["aces_demo_plugin.harness:EchoAgent", "False", "aces_demo_plugin.backend:QuietSandbox",
                                   "True", "always-yes", "always-yes"]


def test_the_graders_know_the_plugin_harness_tools_and_skill_folder(plugin_env):
    code = ("from aces_bench.graders.tool_calls import _kind, skill_ref\n"
            "print(_kind('echo_shell', {}), _kind('echo_open', {}), _kind('echo_other', {}))\n"
            "print(skill_ref('/opt/echo/skills/csv-column-sum/SKILL.md', '/skills'))\n")
    done = _run([sys.executable, "-c", code], plugin_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["shell read other", "SkillRef(skill='csv-column-sum', rel='SKILL.md')"]
    without = _run([sys.executable, "-c", code], {**plugin_env, "PYTHONPATH": ""})
    assert without.stdout.splitlines() == ["other other other", "None"]


def test_self_correction_sees_a_write_to_the_plugin_harness_skill_config(plugin_env):
    code = ("from aces_bench.graders.self_correction import skill_changes\n"
            "from aces_bench.graders.tool_calls import Call\n"
            "c = Call(index=0, step_id=1, call_id='c0', tool='echo_write', kind='write', text='', output='', exit_code=0, failed=False, status_source='exit_code', writes=('/opt/echo/skills.json',))\n"
            "print([ch['file'] for ch in skill_changes((c,), '/skills', {'csv-column-sum'})])\n")
    done = _run([sys.executable, "-c", code], plugin_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['/opt/echo/skills.json']"]
    without = _run([sys.executable, "-c", code], {**plugin_env, "PYTHONPATH": ""})
    assert without.returncode == 0, without.stderr
    assert without.stdout.splitlines() == ["[]"]


def test_an_unknown_judge_kind_lists_the_plugin_one(plugin_env, tmp_path):
    code = ("from aces_bench.config.compose import compose_spec\n"
            f"compose_spec(['judge.kind=never'], output_dir={str(tmp_path)!r})\n")
    done = _run([sys.executable, "-c", code], plugin_env)
    assert done.returncode != 0
    assert "unknown judge kind 'never'; use one of: always-yes, heuristic, litellm" in done.stderr


def test_the_plugin_backend_preflight_refuses_before_any_trial_runs(plugin_env, tmp_path):
    out = tmp_path / "study"
    done = _run([str(ACES), "study=demo", "harness=echo-agent", "backend=quiet-sandbox", f"output_dir={out}"],
                {**plugin_env, "QUIET_SANDBOX_OFF": "1"}, cwd=tmp_path)
    assert done.returncode != 0
    assert "backend=quiet-sandbox is switched off on this machine" in done.stderr
    assert "Traceback" not in done.stderr
    assert not [p for p in out.rglob("*") if p.name in ("trajectory.json", "reward.json", "result.json")]


def test_cases_load_from_the_plugin_file_format(plugin_env, tmp_path):
    skill = tmp_path / "csv-skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: csv-skill\ndescription: a skill whose cases are a CSV file\n---\nBody.\n")
    (skill / "evals" / "evals.csv").write_text("id,prompt,expected_output\nfirst,Add 2 and 2.,4\nsecond,Add 3 and 4.,7\n")
    code = ("from aces_bench.cases import load_suite\n"
            f"suite = load_suite({str(skill)!r}, 'csv-skill')\n"
            "print([(c.id, c.expected_output) for c in suite.evals])\n")
    done = _run([sys.executable, "-c", code], plugin_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[('first', '4'), ('second', '7')]"
    (skill / "evals" / "evals.csv").write_text("id,prompt\nthird,\n")
    bad = _run([sys.executable, "-c", code], plugin_env)
    assert "line 2: a case needs an id and a prompt" in bad.stderr


def test_the_report_draws_the_plugin_figure(plugin_env, study_dir, tmp_path):
    study = tmp_path / "study"
    shutil.copytree(study_dir, study, ignore=shutil.ignore_patterns("report"))
    done = _run([str(ACES), "report", str(study)], plugin_env)
    assert done.returncode == 0, done.stderr
    html = (study / "report" / "index.html").read_text(encoding="utf-8")
    assert 'id="fig-trials_per_condition"' in html and "Trials per condition" in html
    assert (study / "report" / "figures" / "trials_per_condition.svg").is_file()
