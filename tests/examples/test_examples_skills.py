"""The packaged example skills are well-formed: frontmatter, sections, Usage, scripts."""

from __future__ import annotations

import ast
import re
import subprocess

import pytest
from support.examples import PAPER_DECOYS, SANDBOX_PYTHON, skill_dirs

from aces_bench.agents.usage import build_invocation, usage_line
from aces_bench.inputs.skills import load_skill

SECTIONS = ("When to use", "Instructions", "Usage", "Prerequisites", "Limitations", "Troubleshooting")
ALL_DIRS = skill_dirs("skills") + skill_dirs("decoys")


def test_decoys_are_exactly_the_papers_four():
    assert tuple(d.name for d in skill_dirs("decoys")) == PAPER_DECOYS


def test_at_least_four_targets_none_named_like_a_decoy():
    names = [d.name for d in skill_dirs("skills")]
    assert len(names) >= 4
    assert not set(names) & set(PAPER_DECOYS)


@pytest.mark.parametrize("skill_dir", ALL_DIRS, ids=lambda d: d.name)
def test_frontmatter(skill_dir):
    skill = load_skill(skill_dir)
    fm = skill.frontmatter
    assert skill.name == skill_dir.name
    assert 50 <= len(skill.description) <= 150, f"description is {len(skill.description)} characters"
    assert isinstance(fm.get("version"), str) and re.fullmatch(r"\d+\.\d+\.\d+", fm["version"])
    assert isinstance(fm.get("author"), str) and fm["author"].strip()
    for key in ("tags", "tools"):
        assert isinstance(fm.get(key), list) and fm[key] and all(isinstance(v, str) for v in fm[key]), key


@pytest.mark.parametrize("skill_dir", ALL_DIRS, ids=lambda d: d.name)
def test_sections_present_in_order(skill_dir):
    body = load_skill(skill_dir).body
    headings = re.findall(r"^## (.+?)\s*$", body, flags=re.MULTILINE)
    assert [h for h in headings if h in SECTIONS] == list(SECTIONS)


@pytest.mark.parametrize("skill_dir", ALL_DIRS, ids=lambda d: d.name)
def test_usage_runs_a_python_script_of_the_skill(skill_dir):
    skill = load_skill(skill_dir)
    documented = usage_line(skill.body)
    assert documented and documented.startswith("python3 scripts/"), documented
    placeholders = re.findall(r"<[^<>]+>", documented)
    assert placeholders, "Usage takes its input files as <placeholders>"
    invocation = build_invocation(documented, str(skill.path), [f"data/in{i}" for i in range(len(placeholders))])
    assert invocation.script and (skill.path / invocation.script).is_file()


@pytest.mark.parametrize("skill_dir", ALL_DIRS, ids=lambda d: d.name)
def test_scripts_are_stdlib_only_and_parse_on_the_sandbox_python(skill_dir):
    scripts = sorted((skill_dir / "scripts").glob("*.py"))
    assert scripts
    siblings = {p.stem for p in scripts}
    # Ask the sandbox interpreter itself, so 3.12-only syntax and non-stdlib imports both fail.
    probe = (
        "import ast, sys\n"
        "bad = []\n"
        "for path in sys.argv[2:]:\n"
        "    tree = ast.parse(open(path, encoding='utf-8').read(), path)\n"
        "    for node in ast.walk(tree):\n"
        "        names = [a.name for a in node.names] if isinstance(node, ast.Import) else "
        "[node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []\n"
        "        for n in names:\n"
        "            top = n.split('.')[0]\n"
        "            if top not in sys.stdlib_module_names and top not in sys.argv[1].split(','):\n"
        "                bad.append(path + ': ' + n)\n"
        "print('\\n'.join(bad))\n"
    )
    out = subprocess.run(
        [SANDBOX_PYTHON, "-c", probe, ",".join(sorted(siblings)), *map(str, scripts)],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"non-stdlib imports:\n{out.stdout}"


@pytest.mark.parametrize("skill_dir", ALL_DIRS, ids=lambda d: d.name)
def test_scripts_have_docstrings_and_a_main(skill_dir):
    for path in sorted((skill_dir / "scripts").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{path.name} has no module docstring"
    documented = usage_line(load_skill(skill_dir).body)
    entry = skill_dir / documented.split()[1]
    assert 'if __name__ == "__main__":' in entry.read_text(encoding="utf-8")

