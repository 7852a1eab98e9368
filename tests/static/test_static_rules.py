"""One trigger and one non-trigger per Tier 1 rule, on minimal generated skills."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.static_skills import SkillSpec, clean_spec, mutate, write_skill

from aces_bench.static.catalog import catalog
from aces_bench.static.scanner import SkillRef, scan_skill


def scan(tmp_path, spec: SkillSpec, **kw):
    d = write_skill(tmp_path, spec)
    result, _ = scan_skill(SkillRef(d, d.name, "test"), **kw)
    return result


def rule_ids(result) -> set[str]:
    return {f.rule_id for f in result.findings}


def _fm(**changes) -> Callable[[SkillSpec], None]:
    def apply(s: SkillSpec) -> None:
        for k, v in changes.items():
            if v is None:
                s.frontmatter.pop(k, None)
            else:
                s.frontmatter[k] = v

    return apply


def _section(
    name: str, text: str | None = None, rename: str | None = None
) -> Callable[[SkillSpec], None]:
    def apply(s: SkillSpec) -> None:
        if rename is not None:
            s.sections = {
                (rename if k == name else k): v for k, v in s.sections.items()
            }
        elif text is None:
            s.sections.pop(name)
        else:
            s.sections[name] = text

    return apply


def _files(**files) -> Callable[[SkillSpec], None]:
    def apply(s: SkillSpec) -> None:
        for k, v in files.items():
            s.files[k.replace("__", "/").replace("_DOT_", ".")] = v

    return apply


def _chain(*fns) -> Callable[[SkillSpec], None]:
    def apply(s: SkillSpec) -> None:
        for fn in fns:
            fn(s)

    return apply


def _desc(text: str) -> Callable[[SkillSpec], None]:
    return _fm(description=text)


def _set(**attrs) -> Callable[[SkillSpec], None]:
    def apply(s: SkillSpec) -> None:
        for k, v in attrs.items():
            setattr(s, k, v)

    return apply


def _append(name: str, extra: str) -> Callable[[SkillSpec], None]:
    def apply(s: SkillSpec) -> None:
        s.sections[name] = s.sections.get(name, "") + extra

    return apply


LONG_PROSE = "\n".join(
    f"Paragraph {i} explains field mapping detail number {i} for the form filler."
    for i in range(400)
)
MANY_LINES = "\n\n".join(f"Line {i}." for i in range(520))
CODE_70 = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(70)) + "\n```"
NO_ERRORS_TROUBLE = (
    "- If a field stays empty, its CSV column name does not match; rename the column."
)

# rule id -> (mutation that triggers it, optional near-miss mutation that must not)
CASES: dict[str, tuple[Callable, Callable | None]] = {
    "C001": (_set(frontmatter=None), None),
    "C002": (
        _set(raw_frontmatter="name: pdf-form-filler\ndescription: [unclosed"),
        _set(
            raw_frontmatter="name: pdf-form-filler\ndescription: 'Fills PDF form fields: use when a user asks to complete a fillable PDF form; not for scans.'\nversion: '1'\nauthor: a\ntags: [a]\ntools: [Bash]"
        ),
    ),
    "C003": (_fm(name=None), None),
    "C004": (_fm(description=None), None),
    "C005": (
        _fm(version=None),
        _chain(_fm(version=None), _fm(metadata={"skill-version": "2"})),
    ),
    "C006": (
        _fm(author=None),
        _chain(_fm(author=None), _fm(metadata={"skill-author": "Docs"})),
    ),
    "C007": (_fm(tags=None), _chain(_fm(tags=None), _fm(keywords=["pdf"]))),
    "C008": (
        _fm(**{"allowed-tools": None}),
        _chain(_fm(**{"allowed-tools": None}), _fm(tools=["Bash"])),
    ),
    "C009": (_fm(name="pdf-filler"), None),
    "C010": (_chain(_fm(name="PDF_Filler"), _set(dir_name="PDF_Filler")), None),
    "C011": (
        _section("Instructions", rename="Details"),
        _section("Instructions", rename="Workflow"),
    ),
    "C012": (
        _section(
            "Instructions",
            "1. Run the fill.py helper on the form, then check the output against the CSV.",
        ),
        None,
    ),
    "C013": (
        _append("Instructions", "\n4. Then run `python scripts/missing.py out.pdf`."),
        _append("Instructions", "\n4. Other repos keep `tools/scripts/other.py`."),
    ),
    "C014": (_files(scripts__extra_DOT_py="print('x')\n"), None),
    "C015": (_append("Example", " Hidden\u200bword."), None),
    "C016": (
        _append("Example", " See [types](references/nope.md)."),
        _append(
            "Example", " See [spec](https://example.org/spec.md) and [top](#example)."
        ),
    ),
    "C017": (_set(body_override="# PDF Form Filler\n\nFills forms.\n"), None),
    "C018": (_fm(tags=5), None),
    "D001": (_desc("Fills PDF forms. Use when asked."), None),
    "D002": (
        _desc(
            "Fills PDF form fields from a CSV of values and writes a completed copy. Use when a user asks to complete a fillable PDF form with given values; not for scanned PDFs."
        ),
        None,
    ),
    "D003": (
        _desc(
            "Fills PDF form fields from a CSV of values and writes a completed copy next to the input. Use when a user asks to complete a fillable PDF form with values they supply in a table; not for scanned PDFs or images."
        ),
        None,
    ),
    "D004": (
        _desc(
            "Fills PDF form fields from CSV values and writes a completed copy, leaving scanned documents untouched."
        ),
        None,
    ),
    "D005": (
        _desc(
            "Helps with various PDF tasks. Use when a user asks to complete a fillable PDF form; not for scans."
        ),
        None,
    ),
    "D006": (
        _chain(
            _desc(
                "Fills PDF form fields from a CSV of values. Use when a user asks to complete a fillable PDF form."
            ),
            _section(
                "When to use",
                "Use this skill when the user supplies a fillable PDF and the values to enter.",
            ),
        ),
        None,
    ),
    "D007": (
        _chain(_set(dir_name="PDF_Form_Filler"), _fm(name="PDF_Form_Filler")),
        None,
    ),
    "D008": (
        _desc(
            "Fills your PDF form fields from a CSV of values. Use when a user asks to complete a fillable PDF form."
        ),
        None,
    ),
    "D009": (
        _chain(
            _desc(
                "Fills PDF form fields from a CSV of values and writes a completed copy; not for scanned PDFs."
            ),
            _section("When to use", rename="Notes"),
            _section("Notes", "Scanned PDFs are out of scope."),
        ),
        None,
    ),
    "D010": (
        _chain(_set(dir_name="helper"), _fm(name="helper")),
        _chain(_set(dir_name="pdf-helper"), _fm(name="pdf-helper")),
    ),
    "D011": (_set(title=None), None),
    "D012": (_desc("PDF form filler"), None),
    "R001": (
        _chain(
            _section("Troubleshooting", rename="Notes"),
            _section("Notes", NO_ERRORS_TROUBLE),
        ),
        None,
    ),
    "R002": (
        _files(
            scripts__fill_DOT_py="#!/usr/bin/env python3\nimport sys\nprint(open(sys.argv[1]).read())\n"
        ),
        None,
    ),
    "R003": (_section("Prerequisites"), None),
    "R004": (
        _section("Limitations"),
        _section("Limitations", rename="Known limitations"),
    ),
    "R005": (
        _section("Troubleshooting"),
        _section("Troubleshooting", rename="Common issues"),
    ),
    "R006": (
        _fm(mcp_servers=["github"]),
        _chain(
            _fm(mcp_servers=["github"]),
            _append(
                "Prerequisites",
                "\n- Configure the github MCP server in `.mcp.json` and check the connection.",
            ),
        ),
    ),
    "R007": (
        _chain(
            _section("Example"),
            _section(
                "Instructions",
                "1. Run `python scripts/fill.py form.pdf values.csv out.pdf` with [the reference](references/fields.md).\n2. Verify the output fields.",
            ),
        ),
        None,
    ),
    "R008": (
        _files(scripts__run_DOT_sh='#!/bin/sh\npython fill.py "$@"\n'),
        _files(scripts__run_DOT_sh='#!/bin/sh\nset -eu\npython fill.py "$@"\n'),
    ),
    "R009": (
        _files(scripts__requirements_DOT_txt="pypdf\n"),
        _files(scripts__requirements_DOT_txt="pypdf>=4,<5\n# comment\n"),
    ),
    "R010": (
        _chain(
            _section(
                "Instructions",
                "1. Read [the field reference](references/fields.md).\n2. Fill the form:\n\n```bash\npython scripts/fill.py form.pdf values.csv out.pdf\n```",
            ),
            _section("Example", "Input `form.pdf` gives `out.pdf`."),
        ),
        None,
    ),
    "E001": (_section("Details", LONG_PROSE), None),
    "E002": (_section("Details", MANY_LINES), None),
    "E003": (
        _section(
            "Details",
            "Always keep the CSV header row intact.\n\nAlways keep the CSV header row intact.\n\nAlways keep the CSV header row intact.",
        ),
        None,
    ),
    "E004": (
        _chain(
            *[
                _section(
                    k,
                    "Plain prose without any list, see `scripts/fill.py` and [ref](references/fields.md).",
                )
                for k in (
                    "Prerequisites",
                    "Instructions",
                    "Limitations",
                    "Troubleshooting",
                )
            ]
        ),
        None,
    ),
    "E005": (
        _files(
            references__fields_DOT_md="# Field types\n\nSee [more](more.md).\n",
            references__more_DOT_md="# More\n",
        ),
        None,
    ),
    "E006": (
        _section(
            "Details",
            "You might maybe try to fill it. Perhaps possibly it works. It might fail; maybe retry.",
        ),
        None,
    ),
    "E007": (
        _section("Details", "A powerful, seamless and cutting-edge filler."),
        None,
    ),
    "E008": (_files(references__big_DOT_md="x" * 410_000), None),
    "E009": (
        _files(references__big_DOT_md="word " * 9_000),
        _files(references__small_DOT_md="word " * 7_000),
    ),
    "E010": (_section("Details", CODE_70), None),
}


def test_every_catalog_rule_has_a_case_and_a_check():
    from aces_bench.static.context import CHECKS

    ids = {r.id for r in catalog().rules}
    assert len(ids) >= 48
    assert ids == set(CASES), (
        f"rules without a test case: {sorted(ids - set(CASES))}; stale cases: {sorted(set(CASES) - ids)}"
    )
    se_ids = {r.id for r in catalog("skillevaluator").rules}
    assert set(CHECKS) == ids | se_ids, "every profile's rules have a check, and no other check exists"


def test_clean_skill_has_no_findings(tmp_path):
    result = scan(tmp_path, clean_spec())
    assert result.status == "ok"
    assert result.findings == [], [f"{f.rule_id}: {f.message}" for f in result.findings]
    assert result.score == 100.0 and result.grade == "A" and result.passed_gate


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_triggers(tmp_path, rule_id):
    trigger, _ = CASES[rule_id]
    result = scan(tmp_path, mutate(trigger))
    assert result.status == "ok", result.error
    hits = [f for f in result.findings if f.rule_id == rule_id]
    assert hits, f"{rule_id} did not fire; got {sorted(rule_ids(result))}"
    rule = catalog().by_id()[rule_id]
    for f in hits:
        assert (
            f.file and f.message and f.fix == rule.fix and f.dimension == rule.dimension
        )
    dim = next(d for d in result.dimensions if d.dimension == rule.dimension)
    if catalog().deduction(rule) > 0:
        assert dim.score < 100


@pytest.mark.parametrize(
    "rule_id", sorted(k for k, v in CASES.items() if v[1] is not None)
)
def test_rule_near_miss_does_not_trigger(tmp_path, rule_id):
    _, near_miss = CASES[rule_id]
    result = scan(tmp_path, mutate(near_miss))
    assert rule_id not in rule_ids(result), [
        f.message for f in result.findings if f.rule_id == rule_id
    ]
