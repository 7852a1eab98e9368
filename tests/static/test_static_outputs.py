"""Outputs: SARIF 2.1.0 structure, per-skill and corpus JSON, Markdown, deterministic
figures, and the CLI's exit codes and user errors."""

from __future__ import annotations

import json

from support.static_skills import clean_spec, mutate, write_skill

from aces_bench.static.cli import main
from aces_bench.static.models import CorpusResult, SkillResult
from aces_bench.static.pipeline import ScanOptions, run_scan, write_outputs

LEVELS = {"error", "warning", "note", "none"}


def two_skills(tmp_path):
    root = tmp_path / "skills"
    write_skill(root, clean_spec())

    def worse(s):
        s.dir_name = "leaky"
        s.frontmatter["name"] = "leaky"
        s.sections.pop("Limitations")
        s.files["references/creds.md"] = "token AKIAQWERTYUIOPASDFGH\n"

    write_skill(root, mutate(worse))
    return root


def test_sarif_2_1_0_structure(tmp_path):
    root = two_skills(tmp_path)
    corpus, results = run_scan([root], ScanOptions(lint=False))
    write_outputs(tmp_path / "out", corpus, results, ["sarif"])
    log = json.loads((tmp_path / "out" / "scan.sarif").read_text())
    assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "aces-bench"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert (
        len(rule_ids) == len(set(rule_ids))
        and "C001" in rule_ids
        and "S011" in rule_ids
    )
    for r in driver["rules"]:
        assert (
            r["shortDescription"]["text"]
            and r["defaultConfiguration"]["level"] in LEVELS
        )
    base = run["originalUriBaseIds"]["SCANROOT"]["uri"]
    assert base.startswith("file://") and base.endswith("/")
    assert run["results"]
    for res in run["results"]:
        assert res["level"] in LEVELS and res["message"]["text"]
        if "ruleIndex" in res:
            assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "SCANROOT"
        assert not loc["artifactLocation"]["uri"].startswith("/")
        if "region" in loc:
            assert loc["region"]["startLine"] >= 1
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["S011"]["level"] == "error"
    assert (
        by_rule["S011"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "leaky/references/creds.md"
    )
    assert (
        by_rule["R004"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "leaky/SKILL.md"
    )
    assert "AKIAQWERTYUIOPASDFGH" not in json.dumps(log)


def test_json_and_markdown_outputs_round_trip(tmp_path):
    root = two_skills(tmp_path)
    corpus, results = run_scan([root], ScanOptions(lint=False))
    written = write_outputs(tmp_path / "out", corpus, results)
    out = tmp_path / "out"
    assert (out / "corpus.json") in written
    again = CorpusResult.model_validate_json((out / "corpus.json").read_text())
    assert again.n_skills == 2 and again.schema_version == "1"
    leaky = SkillResult.model_validate_json((out / "skills" / "leaky.json").read_text())
    assert (
        leaky.passed_gate is False
        and leaky.tokens
        and "characters / 4" in leaky.tokens.method
    )
    md = (out / "summary.md").read_text()
    assert "## Top-10 violated rules" in md and "| leaky |" in md
    assert "Did not run: no judge configured" in md
    assert (out / "figures" / "score_histogram.svg").exists() and (
        out / "figures" / "top_violations.svg"
    ).exists()


def test_figures_are_byte_identical_across_runs(tmp_path):
    root = two_skills(tmp_path)
    corpus, results = run_scan([root], ScanOptions(lint=False))
    write_outputs(tmp_path / "a", corpus, results, ["md"])
    write_outputs(tmp_path / "b", corpus, results, ["md"])
    for name in ("score_histogram.svg", "top_violations.svg"):
        a = (tmp_path / "a" / "figures" / name).read_bytes()
        assert a == (tmp_path / "b" / "figures" / name).read_bytes()
        assert b"<dc:date>" not in a


def test_cli_exit_codes_and_errors(tmp_path, capsys):
    root = two_skills(tmp_path)
    assert main([str(root / "pdf-form-filler"), "--no-lint", "--quiet"]) == 0
    assert "PASS" in capsys.readouterr().out
    assert (
        main(
            [
                str(root),
                "--no-lint",
                "--quiet",
                "--out",
                str(tmp_path / "o"),
                "--format",
                "json",
            ]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "leaky: 9" in out and "critical security finding" in out
    assert (tmp_path / "o" / "corpus.json").exists() and not (
        tmp_path / "o" / "scan.sarif"
    ).exists()
    assert main([str(tmp_path / "missing"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: ")
        and "path does not exist" in err
        and "Traceback" not in err
    )
    assert main([str(root), "--format", "pdf", "--quiet"]) == 2
    assert "--format" in capsys.readouterr().err
    assert main([str(root), "--judge-base-url", "http://localhost:1", "--quiet"]) == 2
    assert "--judge-model" in capsys.readouterr().err


def test_strict_mode_enforces_the_contract(tmp_path, capsys):
    spec = mutate(lambda s: s.frontmatter.pop("author"))
    d = write_skill(tmp_path, spec)
    assert main([str(d), "--no-lint", "--quiet"]) == 0
    assert main([str(d), "--no-lint", "--quiet", "--strict"]) == 1
    assert (
        "strict: frontmatter contract incomplete (missing author)"
        in capsys.readouterr().out
    )
