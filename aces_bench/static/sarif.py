"""SARIF 2.1.0 for code-scanning UIs: one run, Tier 1 rules, security patterns and
lint codes as rules; each finding a result located in its file and line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from aces_bench import __version__
from aces_bench.static.catalog import Catalog, catalog
from aces_bench.static.models import SkillResult
from aces_bench.static.security import patterns

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/aces-bench/aces-bench"
BASE_ID = "SCANROOT"
LEVELS = {
    "critical": "error",
    "high": "error",
    "medium": "warning",
    "low": "note",
    "info": "note",
}
# GitHub code scanning ranks security results by this property (0-10).
SECURITY_SEVERITY = {
    "critical": "9.5",
    "high": "8.0",
    "medium": "5.5",
    "low": "2.0",
    "info": "0.0",
}


def _rules(cat: Catalog) -> list[dict[str, Any]]:
    rules = [
        {
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": r.title},
            "fullDescription": {"text": r.rationale},
            "help": {"text": f"Fix: {r.fix}"},
            "defaultConfiguration": {"level": LEVELS[r.severity]},
            "properties": {
                "tier": "structural",
                "dimension": r.dimension,
                "severity": r.severity,
                "deduction": cat.deduction(r),
                "tags": ["skill-quality", r.dimension],
            },
        }
        for r in cat.rules
    ]
    for c in patterns().values():
        p = c.p
        rules.append(
            {
                "id": p.id,
                "name": p.category,
                "shortDescription": {"text": p.description},
                "fullDescription": {"text": f"{p.category}: {p.description}"},
                "help": {"text": f"Fix: {p.fix}"},
                "defaultConfiguration": {"level": LEVELS[p.severity]},
                "properties": {
                    "tier": "security",
                    "severity": p.severity,
                    "security-severity": SECURITY_SEVERITY[p.severity],
                    "tags": ["security", p.category],
                },
            }
        )
    return rules


def _location(
    skill_root: str, base: str, file: str, line: int | None
) -> dict[str, Any]:
    uri = os.path.relpath(os.path.join(skill_root, file), base).replace(os.sep, "/")
    loc: dict[str, Any] = {"artifactLocation": {"uri": uri, "uriBaseId": BASE_ID}}
    if line is not None and line >= 1:
        loc["region"] = {"startLine": line}
    return {"physicalLocation": loc}


def to_sarif(
    results: list[SkillResult], roots: list[str], cat: Catalog | None = None
) -> dict[str, Any]:
    """A SARIF 2.1.0 log. Paths are relative to the common folder of the scanned roots."""
    cat = cat or catalog()
    base = (
        os.path.commonpath([os.path.abspath(r) for r in roots])
        if roots
        else os.getcwd()
    )
    if os.path.isfile(base):
        base = os.path.dirname(base)
    rules = _rules(cat)
    index = {r["id"]: i for i, r in enumerate(rules)}
    out: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for r in results:
        root = os.path.abspath(r.path)
        if r.status != "ok":
            notes.append(
                {
                    "level": "error",
                    "message": {"text": f"{r.skill_id}: {r.error}"},
                    "locations": [_location(root, base, "SKILL.md", None)],
                }
            )
            continue
        for f in r.findings:
            out.append(
                {
                    "ruleId": f.rule_id,
                    "ruleIndex": index[f.rule_id],
                    "level": LEVELS[f.severity],
                    "message": {"text": f"{f.message}. Fix: {f.fix}"},
                    "locations": [_location(root, base, f.file, f.line)],
                    "properties": {
                        "skill": r.skill,
                        "skill_id": r.skill_id,
                        "dimension": f.dimension,
                        "severity": f.severity,
                    },
                }
            )
        for s in r.security:
            text = s.message + (f": {s.excerpt}" if s.excerpt else "")
            out.append(
                {
                    "ruleId": s.pattern_id,
                    "ruleIndex": index[s.pattern_id],
                    "level": LEVELS[s.severity],
                    "message": {"text": f"{text}. Fix: {s.fix}"},
                    "locations": [_location(root, base, s.file, s.line)],
                    "properties": {
                        "skill": r.skill,
                        "skill_id": r.skill_id,
                        "category": s.category,
                        "severity": s.severity,
                    },
                }
            )
        for lf in r.lint:
            out.append(
                {
                    "ruleId": f"{lf.tool}/{lf.code}",
                    "level": "note",
                    "message": {"text": lf.message},
                    "locations": [_location(root, base, lf.file, lf.line)],
                    "properties": {
                        "skill": r.skill,
                        "skill_id": r.skill_id,
                        "advisory": True,
                    },
                }
            )
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "aces-bench",
                        "semanticVersion": __version__,
                        "version": __version__,
                        "informationUri": INFO_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {BASE_ID: {"uri": Path(base).as_uri() + "/"}},
                "invocations": [
                    {"executionSuccessful": True, "toolExecutionNotifications": notes}
                ],
                "results": out,
            }
        ],
    }
