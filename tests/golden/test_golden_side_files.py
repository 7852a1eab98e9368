"""Golden side files: static scan results, local-sandbox.json and judge cache entries."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from aces_bench import __version__
from aces_bench.backends.provenance import SandboxProvenance, read_sandbox_provenance
from aces_bench.core.errors import ReportError
from aces_bench.judges.cache import CacheEntry, JudgeCache, cache_key, read_cache_entry
from aces_bench.judges.prompts import AccuracyReply
from aces_bench.static.models import CorpusResult, SkillResult, read_corpus_result, read_skill_result

GOLDEN = Path(__file__).resolve().parent


def newer(path: Path, artifact: str, regenerate: str) -> str:
    return (f"{path}: {artifact} schema_version '9' is newer than this aces-bench ({__version__}) reads (1)\n"
            f"  fix: upgrade aces-bench to the version that wrote this file, or {regenerate}")


def test_static_scan_v1_reads():
    skill = read_skill_result(GOLDEN / "static_scan" / "skill_v1.json")
    corpus = read_corpus_result(GOLDEN / "static_scan" / "corpus_v1.json")
    assert isinstance(skill, SkillResult) and skill.status == "ok" and skill.score is not None
    assert isinstance(corpus, CorpusResult) and corpus.n_skills == 1


def test_static_scan_future_version_is_refused():
    path = GOLDEN / "static_scan" / "future_version.json"
    with pytest.raises(ReportError) as err:
        read_skill_result(path)
    assert str(err.value) == newer(path, "static scan skill result", "re-run the scan (`aces-bench scan`)")


def test_static_scan_bad_score_is_refused_as_a_dotted_key():
    path = GOLDEN / "static_scan" / "malformed_score.json"
    with pytest.raises(ReportError) as err:
        read_skill_result(path)
    assert str(err.value) == (
        f"{path}: invalid values:\n"
        "    score: Input should be a valid number, unable to parse string as a number (got 'ninety-seven')\n"
        "  fix: re-run the scan (`aces-bench scan`) or restore the file"
    )


def test_local_sandbox_v1_reads_from_the_file_or_its_trial_dir(tmp_path):
    prov = read_sandbox_provenance(GOLDEN / "local_sandbox" / "local-sandbox_v1.json")
    assert isinstance(prov, SandboxProvenance) and prov.schema_version == 1 and prov.backend == "local"
    shutil.copy(GOLDEN / "local_sandbox" / "local-sandbox_v1.json", tmp_path / "local-sandbox.json")
    assert read_sandbox_provenance(tmp_path) == prov


def test_local_sandbox_future_version_is_refused():
    path = GOLDEN / "local_sandbox" / "future_version.json"
    with pytest.raises(ReportError) as err:
        read_sandbox_provenance(path)
    assert str(err.value) == newer(path, "local sandbox provenance", "re-run the trial on backend=local")


def test_judge_cache_entry_v1_reads_and_is_a_hit():
    entry = read_cache_entry(GOLDEN / "judge_cache" / "entry_v1.json")
    assert isinstance(entry, CacheEntry) and entry.schema_version == "1"
    assert AccuracyReply.model_validate(entry.value).facts_consistent.answer == "yes"


def _install(entry_file: Path, root: Path) -> dict:
    """Put a golden entry where JudgeCache looks for its key; returns the lookup arguments."""
    data = json.loads(entry_file.read_text())
    key = cache_key(data["model"], data["prompt_id"], data["prompt_version"], data["input_sha256"])
    target = root / data["prompt_id"] / f"{key}.json"
    target.parent.mkdir(parents=True)
    shutil.copy(entry_file, target)
    return {"model": data["model"], "prompt_id": data["prompt_id"], "prompt_version": data["prompt_version"],
            "input_hash": data["input_sha256"], "schema": AccuracyReply}


def test_judge_cache_serves_a_v1_entry(tmp_path):
    args = _install(GOLDEN / "judge_cache" / "entry_v1.json", tmp_path)
    assert JudgeCache(tmp_path).get(**args).actionable.answer == "no"


def test_judge_cache_future_entry_is_refused_by_the_reader_and_a_logged_miss_in_grading(tmp_path, caplog):
    path = GOLDEN / "judge_cache" / "future_version.json"
    with pytest.raises(ReportError) as err:
        read_cache_entry(path)
    assert str(err.value) == newer(path, "judge cache entry", "delete the entry and re-grade")
    args = _install(path, tmp_path)
    with caplog.at_level(logging.WARNING, logger="aces_bench.judges.cache"):
        assert JudgeCache(tmp_path).get(**args) is None
    assert "judge cache entry schema_version '9' is newer" in caplog.text
