"""Safety of skill inputs (aces_bench.inputs.skills): size limits, binary and non-UTF-8 SKILL.md, symlinks out."""

from __future__ import annotations

import os

import pytest
from support.datasets import skill_copy

from aces_bench.core.errors import SkillError
from aces_bench.inputs import skills


def _error(skill_dir) -> str:
    with pytest.raises(SkillError) as err:
        skills.load_skill(skill_dir)
    return str(err.value).replace(str(skill_dir.resolve()), "<skill>").replace(str(skill_dir), "<skill>")


def test_binary_skill_md(tmp_path):
    skill = skill_copy(tmp_path)
    (skill / "SKILL.md").write_bytes(b"---\nname: x\x00\n---\n")
    assert _error(skill) == "<skill>/SKILL.md: file is binary (contains NUL bytes)\n  fix: use a UTF-8 text file"


def test_non_utf8_skill_md(tmp_path):
    skill = skill_copy(tmp_path)
    (skill / "SKILL.md").write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    assert _error(skill) == "<skill>/SKILL.md: file is not UTF-8 (byte 13)\n  fix: re-save the file as UTF-8"


def test_oversized_skill_md(tmp_path, monkeypatch):
    skill = skill_copy(tmp_path)
    monkeypatch.setattr(skills.read_text_file, "__kwdefaults__", {**skills.read_text_file.__kwdefaults__, "limit": 50})
    assert _error(skill).startswith("<skill>/SKILL.md: file is 286 bytes, above the 50-byte limit")


def test_oversized_staged_file(tmp_path, monkeypatch):
    skill = skill_copy(tmp_path)
    monkeypatch.setattr(skills, "MAX_STAGED_FILE_BYTES", 100)
    assert _error(skill) == (
        "<skill>: SKILL.md is 286 bytes, above the 100-byte limit for a staged file\n"
        "  fix: keep large data out of the skill folder (fetch it at run time, or ship a smaller sample)"
    )


def test_oversized_skill_folder(tmp_path, monkeypatch):
    skill = skill_copy(tmp_path)
    monkeypatch.setattr(skills, "MAX_STAGED_TOTAL_BYTES", 300)
    assert "the staged files total" in _error(skill) and "above the 300-byte limit" in _error(skill)


def test_evals_files_do_not_count_toward_staging(tmp_path, monkeypatch):
    skill = skill_copy(tmp_path)
    (skill / "evals" / "files" / "big.csv").write_text("x" * 5000)
    monkeypatch.setattr(skills, "MAX_STAGED_TOTAL_BYTES", 4000)
    assert skills.load_skill(skill).name == "csv-stats"


def test_symlink_outside_the_skill_is_refused(tmp_path):
    skill = skill_copy(tmp_path)
    (tmp_path / "host.txt").write_text("secret")
    os.symlink(tmp_path / "host.txt", skill / "scripts" / "host.txt")
    assert _error(skill).startswith("<skill>: symlink scripts/host.txt points outside the skill folder")


@pytest.mark.parametrize("version", ["1.0\x1b[31m", "1.0\x07", "1.0\x7f"])
def test_a_control_character_in_the_version_is_refused_at_input(tmp_path, version):
    """Harbor's TOML writer mangles control characters in task.toml silently: a skill
    version holding one is refused when the skill is read, naming the key."""
    skill = skill_copy(tmp_path)
    text = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text.replace("version: 2.1.0", f'version: "{version.encode("unicode_escape").decode()}"'))
    assert _error(skill) == (f"<skill>/SKILL.md:version: frontmatter 'version' {version!r} holds a control character\n"
                             "  fix: write the version with printable characters only (e.g. 1.2.0)")
