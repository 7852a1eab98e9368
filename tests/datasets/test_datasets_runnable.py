"""Which documented scripts can run here: the ones that cannot are counted apart, with the reason."""

from __future__ import annotations

import shutil

import pytest
from support.datasets import skill_copy

from aces_bench.datasets.measure import measure_skill
from aces_bench.datasets.runnable import not_runnable
from aces_bench.inputs.skills import load_skill

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def _skill(tmp_path, source: str, helper: str | None = None):
    d = skill_copy(tmp_path)
    (d / "scripts" / "stats.py").write_text(source)
    if helper is not None:
        (d / "scripts" / "helper_mod.py").write_text(helper)
    return load_skill(d)


def test_a_top_level_import_this_interpreter_lacks_is_not_runnable_before_any_run(tmp_path):
    skill = _skill(tmp_path, "import sys\nimport rdkit_not_here\nfrom numpy import sum\nprint(1)\n")
    assert not_runnable(skill, "scripts/stats.py") == "needs Python package(s) rdkit_not_here, not installed here"


def test_stdlib_installed_and_the_skills_own_modules_are_available(tmp_path):
    skill = _skill(tmp_path, "import json, csv\nimport numpy, yaml\nimport helper_mod\n", helper="X = 1\n")
    assert not_runnable(skill, "scripts/stats.py") is None
    assert not_runnable(skill, "scripts/stats.py", "", "Traceback ...\nZeroDivisionError") is None


def test_a_guarded_import_excuses_a_failure_only_when_the_output_names_it(tmp_path):
    source = "try:\n    import ete_not_here\nexcept ImportError:\n    print('Error: ete_not_here not installed')\n"
    skill = _skill(tmp_path, source)
    assert not_runnable(skill, "scripts/stats.py") is None  # optional until the run says otherwise
    assert "ete_not_here" in not_runnable(skill, "scripts/stats.py", "Error: ete_not_here not installed\n", "")


def test_a_failed_run_needing_a_credential_or_an_absent_command_is_not_runnable(tmp_path):
    skill = _skill(tmp_path, "import os\nkey = os.environ.get('OPENROUTER_API_KEY')\n")
    assert "OPENROUTER_API_KEY" in not_runnable(skill, "scripts/stats.py", "Error: OPENROUTER_API_KEY not set\n", "")
    assert not_runnable(skill, "scripts/stats.py", "", "ZeroDivisionError") is None  # failed for another reason
    skill = _skill(tmp_path / "b", "import subprocess\nsubprocess.run(['no-such-cli-xyz', 'pr', 'view'])\n")
    assert not_runnable(skill, "scripts/stats.py", "", "FileNotFoundError: 'no-such-cli-xyz'") == \
        "needs the command(s) no-such-cli-xyz, not installed here"


def test_a_program_from_a_built_list_or_an_unreachable_host_is_not_runnable_only_on_the_runs_word(tmp_path):
    skill = _skill(tmp_path, "import subprocess\ncmd = ['no-such-cli-xyz', 'api']\nsubprocess.run(cmd)\n")
    said = "FileNotFoundError: [Errno 2] No such file or directory: 'no-such-cli-xyz'"
    assert not_runnable(skill, "scripts/stats.py", "", said) == "needs the command(s) no-such-cli-xyz, not installed here"
    assert not_runnable(skill, "scripts/stats.py", "", "No such file or directory: 'data/x.csv'") is None
    skill = _skill(tmp_path / "n", "import urllib.request\nurllib.request.urlopen('https://example.org')\n")
    said = "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"
    assert "needs the network" in not_runnable(skill, "scripts/stats.py", "", said)
    assert not_runnable(skill, "scripts/stats.py", "", "KeyError: 'x'") is None
    offline = _skill(tmp_path / "o", "print('no client here')\n")  # no network client: the run's words alone excuse nothing
    assert not_runnable(offline, "scripts/stats.py", "", said) is None


def test_a_missing_module_of_the_skills_own_is_no_excuse(tmp_path):
    skill = _skill(tmp_path, "import importlib\nimportlib.import_module('helper_mod')\n", helper="X = 1\n")
    assert not_runnable(skill, "scripts/stats.py", "", "ModuleNotFoundError: No module named 'helper_mod'") is None


@pytest.mark.sandbox
@needs_bwrap
def test_a_skill_cannot_escape_measurement_by_naming_a_missing_package(tmp_path):
    """Gaming attempt: a script that names a missing package and a credential in a comment and a string is
    measured like any other: working, it satisfies its drafts; broken, it fails them and is not excused."""
    d = skill_copy(tmp_path)
    script = d / "scripts" / "stats.py"
    script.write_text("# needs rdkit_not_here and OPENROUTER_API_KEY\nHINT = 'OPENROUTER_API_KEY'\n"
                      + script.read_text())
    m = measure_skill(load_skill(d))
    assert m.unrunnable == 0 and (m.task_drafts, m.satisfied) == (3, 3), m
    script.write_text(script.read_text().replace("import sys", "import sys\nsys.exit(1)", 1))
    m = measure_skill(load_skill(d))
    assert (m.unrunnable, m.task_drafts, m.satisfied) == (0, 3, 0), m
