"""Findings 6 and 9: links with innocent names pointing at host files, and link loops.

``dataset create`` skipped ``.DS_Store``, ``__pycache__`` and ``*.pyc`` by name and
then copied the skill with ``copytree(symlinks=False)``: an SSH key behind a
``.DS_Store`` link reached the sandbox and the drafted evals.json. Every reader now
lists a skill through ``skilltree.walk``, which judges a link by its target. A loop
(in the skill or in a sibling folder) is a one-line error, never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support.security import HOSTILE_SKILL, files_containing
from support.studies import run_cli, study_overrides

from aces_bench.core.errors import SkillError
from aces_bench.inputs.skills import load_skill
from aces_bench.inputs.skilltree import LOOP, OUTSIDE, SPECIAL, walk

pytestmark = [pytest.mark.timeout(300)]

HOST_SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- canary-7d1f0e6a5b4c3d2e1f00aa"
# Names the old walk skipped by pattern, and one it did not: each a link to the host file.
INNOCENT = [".DS_Store", "__pycache__", "scripts/colsum.cpython-312.pyc", "scripts/__pycache__",
            ".git", "references/notes.md"]


def host_file(tmp_path: Path) -> Path:
    secret = tmp_path / "home" / ".ssh" / "id_ed25519"
    secret.parent.mkdir(parents=True)
    secret.write_text(HOST_SECRET + "\n")
    return secret


def linked_skill(tmp_path: Path, name: str, target: Path) -> Path:
    skill = tmp_path / "skills" / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    link = skill / name
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target if not name.endswith("__pycache__") and name != ".git" else target.parent, link)
    return skill


@pytest.mark.parametrize("name", INNOCENT)
def test_the_loader_refuses_a_link_out_whatever_its_name(tmp_path, name):
    secret = host_file(tmp_path)
    skill = linked_skill(tmp_path, name, secret)
    with pytest.raises(SkillError) as err:
        load_skill(skill)
    text = str(err.value)
    assert f"symlink {name} points outside the skill folder" in text
    assert len(text.splitlines()) == 2 and text.splitlines()[1].startswith("  fix: ")
    assert HOST_SECRET not in text


@pytest.mark.parametrize("name", [".DS_Store", "scripts/colsum.cpython-312.pyc"])
def test_dataset_create_refuses_and_copies_nothing_of_the_host(tmp_path, name):
    secret = host_file(tmp_path)
    skill = linked_skill(tmp_path, name, secret)
    before = (skill / "evals" / "evals.json").read_text()
    proc = run_cli("dataset", "create", str(skill), "--all-buckets", timeout=180)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"symlink {name} points outside the skill folder" in proc.stderr
    assert (skill / "evals" / "evals.json").read_text() == before
    assert HOST_SECRET not in proc.stdout + proc.stderr
    drafts = [p for p in Path("/tmp").glob("aces-draft-*") if files_containing(p, [HOST_SECRET])]
    assert drafts == []


def test_a_study_refuses_before_emitting(tmp_path):
    secret = host_file(tmp_path)
    skill = linked_skill(tmp_path, ".DS_Store", secret)
    out = tmp_path / "out"
    proc = run_cli(f"output_dir={out}", *study_overrides(skill=skill, root_parent=tmp_path), timeout=180)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "symlink .DS_Store points outside the skill folder" in proc.stderr and "Traceback" not in proc.stderr
    assert not (out / "tasks").exists() or files_containing(out, [HOST_SECRET]) == []


def test_a_link_inside_the_skill_is_the_file_it_points_at(tmp_path):
    skill = tmp_path / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    os.symlink("colsum.py", skill / "scripts" / "sum.py")
    os.symlink("scripts", skill / "bin")  # a linked folder: not descended, not refused
    loaded = load_skill(skill)
    kinds = {e.rel: e.kind for e in walk(skill)}
    assert kinds["scripts/sum.py"] == "file" and kinds["bin"] == "linked_dir"
    assert loaded.content_hash != load_skill(HOSTILE_SKILL).content_hash  # the linked file is staged


def test_the_walk_never_opens_a_fifo_and_names_loops(tmp_path):
    root = tmp_path / "s"
    (root / "sub").mkdir(parents=True)
    os.mkfifo(root / "sub" / "pipe")
    os.symlink("loop-b", root / "loop-a")
    os.symlink("loop-a", root / "loop-b")
    os.symlink("/etc/passwd", root / "sub" / ".DS_Store")
    kinds = {e.rel: e.kind for e in walk(root)}
    assert kinds == {"loop-a": LOOP, "loop-b": LOOP, "sub/.DS_Store": OUTSIDE, "sub/pipe": SPECIAL}


def loop_skill(tmp_path: Path) -> Path:
    skill = tmp_path / "skills" / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    os.symlink("self", skill / "references")
    os.symlink("references", skill / "self")
    return skill


def test_a_loop_in_the_skill_is_one_line_in_a_study_and_in_dataset_create(tmp_path):
    skill = loop_skill(tmp_path)
    proc = run_cli(f"output_dir={tmp_path / 'out'}", *study_overrides(skill=skill, root_parent=tmp_path), timeout=180)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "symlink references loops" in proc.stderr
    proc = run_cli("dataset", "create", str(skill), "--dry-run", timeout=180)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "symlink references loops" in proc.stderr


def test_a_loop_in_a_sibling_folder_does_not_stop_dataset_create(tmp_path):
    skill = tmp_path / "skills" / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    sibling = tmp_path / "skills" / "sibling"
    sibling.mkdir()
    (sibling / "SKILL.md").write_text("---\nname: sibling\ndescription: A sibling skill.\n---\n# Sibling\n")
    os.symlink("x", sibling / "y")
    os.symlink("y", sibling / "x")
    os.symlink("loop", tmp_path / "skills" / "loop")
    proc = run_cli("dataset", "create", str(skill), "--dry-run", "--all-buckets", timeout=180)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_scan_reports_innocent_links_and_reads_none_of_them(tmp_path):
    secret = host_file(tmp_path)
    skill = linked_skill(tmp_path, ".DS_Store", secret)
    os.symlink(secret, skill / "scripts" / "x.pyc")
    out = tmp_path / "scan"
    proc = run_cli("scan", str(skill), "--out", str(out), timeout=180)
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(next((out / "skills").glob("*.json")).read_text())
    text = json.dumps(report)
    assert "symlink points outside the skill" in text and ".DS_Store" in text and "scripts/x.pyc" in text
    assert files_containing(out, [HOST_SECRET]) == []
