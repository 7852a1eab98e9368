"""Bad input never crashes the scanner: it becomes findings or a per-skill error entry."""

from __future__ import annotations

import os

import pytest
from support.static_skills import clean_spec, mutate, write_skill

from aces_bench.core.errors import AcesError, SkillError
from aces_bench.static.loader import MAX_SCAN_BYTES
from aces_bench.static.pipeline import ScanOptions, run_scan
from aces_bench.static.scanner import discover


def corpus_of(tmp_path, *specs):
    for s in specs:
        write_skill(tmp_path, s)
    return run_scan([tmp_path], ScanOptions(lint=False))


def test_binary_skill_md_is_an_error_entry_not_a_zero(tmp_path):
    good = clean_spec()
    bad = mutate(lambda s: setattr(s, "dir_name", "binary-skill"))
    d = write_skill(tmp_path, bad)
    (d / "SKILL.md").write_bytes(b"---\nname: x\n---\n\x00\x01\x02 binary")
    write_skill(tmp_path, good)
    corpus, results = run_scan([tmp_path], ScanOptions(lint=False))
    err = next(r for r in results if r.skill_id == "binary-skill")
    assert err.status == "error" and err.score is None and err.passed_gate is None
    assert "binary" in err.error
    assert corpus.n_errors == 1 and corpus.stats.n == 1 and corpus.stats.mean == 100.0
    assert corpus.errors[0]["skill_id"] == "binary-skill"


def test_non_utf8_skill_md_is_an_error_entry(tmp_path):
    d = write_skill(tmp_path, clean_spec())
    (d / "SKILL.md").write_bytes(
        "---\nname: pdf-form-filler\ndescription: caf\xe9\n---\n".encode("latin-1")
    )
    _, results = run_scan([tmp_path], ScanOptions(lint=False))
    assert results[0].status == "error"
    assert "not UTF-8" in results[0].error and "re-save" in results[0].error


def test_no_frontmatter_is_a_critical_finding(tmp_path):
    _, results = corpus_of(tmp_path, mutate(lambda s: setattr(s, "frontmatter", None)))
    r = results[0]
    assert r.status == "ok"
    c001 = [f for f in r.findings if f.rule_id == "C001"]
    assert c001 and c001[0].severity == "critical" and c001[0].line == 1


def test_invalid_yaml_reports_the_line(tmp_path):
    spec = mutate(
        lambda s: setattr(
            s,
            "raw_frontmatter",
            "name: pdf-form-filler\ndescription: ok\ntags: [a, b\nversion: 1",
        )
    )
    _, results = corpus_of(tmp_path, spec)
    c002 = [f for f in results[0].findings if f.rule_id == "C002"]
    assert c002 and "invalid" in c002[0].message
    assert c002[0].line is not None and c002[0].line >= 2


def test_frontmatter_that_is_not_a_mapping(tmp_path):
    _, results = corpus_of(
        tmp_path, mutate(lambda s: setattr(s, "raw_frontmatter", "- just\n- a list"))
    )
    assert any(
        f.rule_id == "C002" and "not a mapping" in f.message
        for f in results[0].findings
    )


def test_unclosed_frontmatter(tmp_path):
    d = write_skill(tmp_path, clean_spec())
    (d / "SKILL.md").write_text(
        "---\nname: pdf-form-filler\n# Title\n\nbody text\n", encoding="utf-8"
    )
    _, results = run_scan([tmp_path], ScanOptions(lint=False))
    assert any(
        f.rule_id == "C002" and "closing" in f.message for f in results[0].findings
    )


def test_symlink_loop_and_escape_become_security_findings(tmp_path):
    d = write_skill(tmp_path / "skills", clean_spec())
    os.symlink("loop_b", d / "loop_a")
    os.symlink("loop_a", d / "loop_b")
    os.symlink(d, d / "references" / "self_dir")  # a directory loop back to the skill
    (tmp_path / "outside.txt").write_text("secret", encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", d / "references" / "escape.md")
    _, results = run_scan([tmp_path / "skills"], ScanOptions(lint=False))
    r = results[0]
    assert r.status == "ok"
    s060 = {(s.file, s.pattern_id) for s in r.security if s.pattern_id == "S060"}
    assert ("loop_a", "S060") in s060 and ("loop_b", "S060") in s060
    assert ("references/escape.md", "S060") in s060
    assert all(
        s.file != "references/escape.md" or "outside" in s.message for s in r.security
    )


def test_50mb_reference_is_not_read_but_reported(tmp_path):
    d = write_skill(tmp_path, clean_spec())
    big = d / "references" / "huge.md"
    with open(big, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB on paper, instant to create
    assert big.stat().st_size > MAX_SCAN_BYTES
    _, results = run_scan([tmp_path], ScanOptions(lint=False))
    r = results[0]
    s061 = [s for s in r.security if s.pattern_id == "S061"]
    assert (
        s061
        and s061[0].file == "references/huge.md"
        and "not scanned" in s061[0].message
    )
    assert {"E008", "E009"} <= {f.rule_id for f in r.findings}


def test_huge_skill_md_is_an_error_entry(tmp_path):
    d = write_skill(tmp_path, clean_spec())
    with open(d / "SKILL.md", "ab") as fh:
        fh.write(b"x" * 1_100_000)
    _, results = run_scan([tmp_path], ScanOptions(lint=False))
    assert results[0].status == "error" and "limit" in results[0].error


def test_binary_reference_is_a_low_finding(tmp_path):
    d = write_skill(tmp_path, clean_spec())
    (d / "references" / "blob.txt").write_bytes(b"\x00\xff\x00")
    _, results = run_scan([tmp_path], ScanOptions(lint=False))
    assert any(
        s.pattern_id == "S062" and s.file == "references/blob.txt"
        for s in results[0].security
    )


def test_missing_path_is_a_user_error_naming_it(tmp_path):
    with pytest.raises(SkillError) as exc:
        discover([tmp_path / "nope"])
    assert str(tmp_path / "nope") in str(exc.value) and "fix:" in str(exc.value)


def test_folder_without_skills_is_a_user_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(AcesError) as exc:
        discover([tmp_path / "empty"])
    assert "no SKILL.md" in str(exc.value)


def test_glob_and_nested_discovery(tmp_path):
    write_skill(tmp_path / "src-a", clean_spec())
    write_skill(tmp_path / "src-b", mutate(lambda s: setattr(s, "dir_name", "other")))
    refs = discover([tmp_path])
    assert [(r.skill_id, r.source) for r in refs] == [
        ("src-a/pdf-form-filler", "src-a"),
        ("src-b/other", "src-b"),
    ]
    assert [r.skill_id for r in discover([str(tmp_path / "src-*" / "*")])] == [
        "other",
        "pdf-form-filler",
    ]


def test_fifo_is_reported_and_never_opened(tmp_path):
    d = write_skill(tmp_path, clean_spec())
    os.mkfifo(d / "references" / "pipe.md")
    _, results = run_scan([tmp_path], ScanOptions(lint=False))
    assert any(
        s.pattern_id == "S063" and s.file == "references/pipe.md"
        for s in results[0].security
    )


def test_yaml_alias_bomb_does_not_hang(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    )
    spec = mutate(
        lambda s: setattr(
            s,
            "raw_frontmatter",
            "name: pdf-form-filler\ndescription: Fills PDF forms. Use when asked to fill a form.\n"
            + bomb
            + "tools: *i\nallowed-tools: *i",
        )
    )
    _, results = corpus_of(tmp_path, spec)
    assert results[0].status == "ok"
