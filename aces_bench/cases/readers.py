"""How other tools' evaluation files are read, field by field, with a note for each decision.

The formats authors already have, read unchanged:

- SkillEvaluator (the paper's public implementation): a top-level JSON list of cases
  (``question``, ``ground_truth``, ``expected_behavior``, ``expected_skill``,
  ``expected_script`` often as a bare file name such as ``calc.py``, ``should_trigger``,
  ``acceptable_alternates``), or the agentskills.io object ``{skill_name, evals}``;
  several ``evals*.json`` files side by side; ``files`` relative to ``evals/``.
- Anthropic's skill-creator: ``{skill_name, evals: [{id: <int>, prompt, expected_output,
  files: ["evals/files/x.csv"], expectations: [..]}]}`` (some authors write
  ``assertions``), and trigger sets ``[{query, should_trigger}]``.
- The paper's spellings (``question``, ``ground_truth``) and this project's own form.

Every field of a case is either used (and the note says how) or reported as ignored
with the reason; a field no format defines is an error naming it, so a typo never
silently drops a check. The result is a payload for ``EvalCase`` and a
``CaseReading`` per case, shown by ``aces-bench dataset show``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from aces_bench.core.errors import EvalsError
from aces_bench.inputs.skilltree import walk

# Fields EvalCase reads as they are (this project's canonical names).
NATIVE_FIELDS = frozenset({
    "id", "prompt", "expected_output", "kind", "assertions", "expected_skill", "expected_script",
    "acceptable_skills", "files", "expected_behavior", "required_credentials", "source", "note",
    "proposed", "status", "judged_only",
})
# (other spelling, canonical, who writes it)
RENAMES: tuple[tuple[str, str, str], ...] = (
    ("question", "prompt", "the paper / SkillEvaluator legacy spelling"),
    ("query", "prompt", "a skill-creator trigger query"),
    ("ground_truth", "expected_output", "the paper / SkillEvaluator legacy spelling"),
    ("expectations", "assertions", "skill-creator's spelling; each is judged with evidence"),
    ("acceptable_alternates", "acceptable_skills", "SkillEvaluator's legacy alias"),
    ("credentials", "required_credentials", "eval.config's spelling"),
)
# Fields other tools define that aces-bench does not act on: reported, never silent.
IGNORED_FIELDS: dict[str, str] = {
    "cross_component": "SkillEvaluator plugin signal (advisory there too)",
    "expected_skills": "SkillEvaluator plugin signal (advisory there too)",
    "expected_tools": "SkillEvaluator plugin signal (advisory there too)",
    "acceptable_tools": "SkillEvaluator plugin signal (advisory there too)",
    "decoy_tools": "SkillEvaluator plugin signal (advisory there too)",
    "tool_arguments": "SkillEvaluator plugin signal (advisory there too)",
    "expected_order": "SkillEvaluator plugin signal (advisory there too)",
    "handoffs": "SkillEvaluator plugin signal (advisory there too)",
    "conflict_probes": "SkillEvaluator plugin signal (advisory there too)",
    "eval_name": "skill-creator's display label; the id names the case here",
    "name": "a display label; the id names the case here",
    "environment": "per-case environment overrides are not passed to trials (name credentials instead)",
}
FIXTURE_DIR = "evals/files"
WORKSPACE_DATA = "data"


@dataclass
class CaseReading:
    """How one case was read: its file, the format recognised, and one note per decision."""

    case_id: str
    file: str
    format: str
    notes: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"{self.case_id}  ({self.file}, {self.format})"]
        lines += [f"    {n}" for n in self.notes]
        lines += [f"    ignored: {i}" for i in self.ignored]
        return "\n".join(lines)


def detect_format(raw: Any) -> str:
    """A label for the file's shape, for the reading report."""
    cases = raw if isinstance(raw, list) else (raw.get("evals") if isinstance(raw, dict) else None)
    cases = [c for c in cases or [] if isinstance(c, dict)]
    if isinstance(raw, list):
        if cases and all("query" in c for c in cases):
            return "skill-creator trigger set"
        return "SkillEvaluator legacy list"
    if isinstance(raw, dict) and "schema_version" in raw:
        return "aces-bench"
    if any("expectations" in c or isinstance(c.get("id"), int) for c in cases):
        return "skill-creator"
    if any("question" in c or "ground_truth" in c for c in cases):
        return "paper spelling"
    return "agentskills.io"


def derived_id(prompt: str) -> str:
    """A case id from its prompt: stable across reorderings and whitespace edits."""
    return "case-" + hashlib.sha256(" ".join(prompt.split()).encode()).hexdigest()[:10]


class SkillFiles:
    """What the reader needs of the skill folder: which files exist, by path and by name."""

    def __init__(self, skill_dir: Path):
        self.root = Path(skill_dir).resolve()
        self._by_name: dict[str, list[str]] | None = None
        self._exists: dict[str, bool] = {}  # one read of a suite: its cases often share fixtures

    def exists(self, rel: str) -> bool:
        if rel not in self._exists:
            try:
                path = (self.root / rel).resolve()
                self._exists[rel] = path.is_relative_to(self.root) and path.is_file()
            except (OSError, ValueError, RuntimeError):  # RuntimeError: a symlink loop (Path.resolve)
                self._exists[rel] = False
        return self._exists[rel]

    def by_name(self, name: str) -> list[str]:
        if self._by_name is None:
            self._by_name = {}
            for entry in walk(self.root):
                rel = PurePosixPath(entry.rel)
                if entry.is_file and not any(part.startswith(".") for part in rel.parts) and rel.parts[0] != "evals":
                    self._by_name.setdefault(rel.name, []).append(entry.rel)
        return self._by_name.get(name, [])

    def fixtures(self) -> list[str]:
        return sorted(e.rel for e in walk(self.root) if e.is_file and e.rel.startswith(FIXTURE_DIR + "/"))


def _resolve_script(script: str, files: SkillFiles, reading: CaseReading, where: str, where_path: Path) -> str:
    """A script path relative to the skill: as given, under scripts/, or the one file of that name."""
    norm = script.replace("\\", "/").removeprefix("./")
    if files.exists(norm) or PurePosixPath(norm).is_absolute() or ".." in PurePosixPath(norm).parts:
        return norm  # present, or refused by the model's own path check
    for candidate in (f"scripts/{norm}",):
        if files.exists(candidate):
            reading.notes.append(f"expected_script {script!r} resolved inside the skill to {candidate}")
            return candidate
    same = files.by_name(PurePosixPath(norm).name)
    if len(same) == 1:
        reading.notes.append(f"expected_script {script!r} resolved inside the skill to {same[0]}")
        return same[0]
    found = f" (files of that name: {', '.join(same)})" if same else ""
    raise EvalsError(
        f"{where}.expected_script: case {reading.case_id!r} names {script!r}, which is not a file in the skill{found}",
        where=where_path,
        fix="give the path relative to the skill folder, e.g. scripts/run.py",
    )


def _resolve_fixture(src: str, files: SkillFiles, reading: CaseReading) -> str:
    """A fixture path relative to the skill: as given, or relative to evals/ (SkillEvaluator's base)."""
    norm = src.replace("\\", "/").removeprefix("./")
    if files.exists(norm):
        return norm
    under = f"evals/{norm}"
    if files.exists(under):
        reading.notes.append(f"files: {src!r} read relative to evals/ (SkillEvaluator's base) as {under}")
        return under
    return norm  # the fixture check names the missing file


def _rewrite_prompt(prompt: str, staged: list[tuple[str, str]], reading: CaseReading) -> str:
    """Inputs named by their path in the skill are renamed to where the workspace holds them."""
    out = prompt
    for src, dest in sorted(set(staged), key=lambda p: -len(p[0])):
        if src == dest:
            continue
        # Whole paths only: "x.csv" inside "data/x.csv" is not the skill path "x.csv".
        pattern = re.compile(r"(?<![\w/.-])(?:\./)?" + re.escape(src) + r"(?![\w/-])")
        out, n = pattern.subn(dest, out)
        if n:
            reading.notes.append(f"prompt: {src} rewritten to {dest} (where the workspace holds it)")
    return out


def read_case(
    raw: Any, i: int, *, skill_name: str, files: SkillFiles, path: Path, file: str, fmt: str,
    legacy_all_fixtures: bool,
) -> tuple[dict[str, Any], CaseReading]:
    """The EvalCase payload one raw case describes, and how it was read (``file``: its name in the report)."""
    where = f"evals[{i}]"
    if not isinstance(raw, dict):
        raise EvalsError(
            f"{where}: a case must be a mapping of fields, got {type(raw).__name__}",
            where=path, fix="write each case as an object with at least a prompt",
        )
    data = dict(raw)
    reading = CaseReading(case_id="?", file=file, format=fmt)
    for other, canonical, why in RENAMES:
        if other not in data:
            continue
        if canonical in data:
            raise EvalsError(
                f"{where}: give either '{canonical}' or '{other}' (the same field), not both",
                where=path, fix=f"keep one of '{canonical}' and '{other}'",
            )
        data[canonical] = data.pop(other)
        reading.notes.append(f"{other} read as {canonical} ({why})")
    for name in sorted(set(data) & set(IGNORED_FIELDS)):
        data.pop(name)
        reading.ignored.append(f"{name}: {IGNORED_FIELDS[name]}")
    unknown = sorted(set(data) - NATIVE_FIELDS - {"should_trigger"})
    if unknown:
        known = sorted(NATIVE_FIELDS | {o for o, _, _ in RENAMES} | {"should_trigger"})
        hints = [f"{u!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, known, 1)) else repr(u)
                 for u in unknown]
        raise EvalsError(
            f"{where}: unknown field(s) {', '.join(hints)} in case {data.get('id', i)!r}",
            where=path, fix=f"fix the spelling or remove the field; fields read: {', '.join(known)}",
        )
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise EvalsError(
            f"{where}: case {data.get('id', i)!r} has no prompt (or question)",
            where=path, fix="give the case a non-empty prompt",
        )
    case_id = data.get("id")
    if isinstance(case_id, int) and not isinstance(case_id, bool):
        data["id"] = str(case_id)
        reading.notes.append(f"integer id {case_id} kept as id {data['id']!r}")
    elif case_id is None:
        data["id"] = derived_id(prompt)
        reading.notes.append(f"no id: named {data['id']!r} from its prompt")
    reading.case_id = str(data["id"])
    if isinstance(data.get("expected_behavior"), str):
        data["expected_behavior"] = [data["expected_behavior"]]
    if isinstance(data.get("assertions"), str):
        data["assertions"] = [data["assertions"]]
    n_text = sum(isinstance(a, str) for a in data.get("assertions") or [])
    if n_text:
        reading.notes.append(f"{n_text} expectation(s) judged one by one with evidence (behavior_check)")
    if "should_trigger" in data:
        trig = data.pop("should_trigger")
        if not isinstance(trig, bool):
            raise EvalsError(f"{where}.should_trigger: case {reading.case_id!r} needs true or false, got {trig!r}",
                             where=path, fix="write should_trigger: true or false")
        if trig:
            data.setdefault("expected_skill", skill_name)
            reading.notes.append("should_trigger true: the skill is expected")
        else:
            if data.get("expected_skill") not in (None, skill_name):
                reading.notes.append(f"should_trigger false: expected_skill {data['expected_skill']!r} kept")
            else:
                data["expected_skill"] = None
                reading.notes.append("should_trigger false: a negative control (the skill must not be used)")
    # files: a bare string, null, or a list of paths / {src, dest}
    raw_files = data.get("files", None) if "files" in data else None
    if "files" not in data and legacy_all_fixtures and files.fixtures():
        raw_files = files.fixtures()
        reading.notes.append(f"no files: stages all of {FIXTURE_DIR}/ (SkillEvaluator's legacy behaviour)")
    if isinstance(raw_files, str):
        raw_files = [raw_files]
    staged: list[tuple[str, str]] = []
    if raw_files is not None:
        if not isinstance(raw_files, list):
            raise EvalsError(f"{where}.files: case {reading.case_id!r} needs a list of paths",
                             where=path, fix="write files as a list of paths relative to the skill folder")
        out = []
        for f in raw_files:
            if isinstance(f, str):
                src = _resolve_fixture(f, files, reading)
                dest = f"{WORKSPACE_DATA}/{PurePosixPath(src).name}"
                out.append({"src": src, "dest": dest})
                staged += [(f, dest), (src, dest)]
            elif isinstance(f, dict) and isinstance(f.get("src"), str):
                src = _resolve_fixture(f["src"], files, reading)
                out.append({**f, "src": src})
                if isinstance(f.get("dest"), str):
                    staged += [(f["src"], f["dest"]), (src, f["dest"])]
            else:
                out.append(f)  # the model names what is wrong with it
        data["files"] = out
    elif "files" in data:
        data["files"] = []
    data["prompt"] = _rewrite_prompt(prompt, staged, reading)
    if isinstance(data.get("expected_script"), str) and data.get("expected_skill", skill_name) == skill_name:
        data["expected_script"] = _resolve_script(data["expected_script"], files, reading, where, path)
    return data, reading


def suite_payload(
    raw: Any, *, skill_name: str, files: SkillFiles, path: Path, file: str
) -> tuple[dict[str, Any], list[CaseReading]]:
    """The EvalSuite payload of one evals file, with a reading per case."""
    fmt = detect_format(raw)
    legacy = isinstance(raw, list)
    if legacy:
        raw = {"evals": raw}
    if not isinstance(raw, dict):
        raise EvalsError(f"the file must hold a list of cases or an object with 'evals', got {type(raw).__name__}",
                         where=path, fix="write {\"skill_name\": ..., \"evals\": [...]} or a list of cases")
    header = dict(raw)
    cases = header.pop("evals", None)
    if not isinstance(cases, list):
        raise EvalsError("no 'evals' list", where=path, fix="put the cases in an 'evals' list")
    payloads, readings = [], []
    for i, c in enumerate(cases):
        payload, reading = read_case(c, i, skill_name=skill_name, files=files, path=path, file=file, fmt=fmt,
                                     legacy_all_fixtures=legacy)
        payloads.append(payload)
        readings.append(reading)
    return {**header, "evals": payloads}, readings


# openai/skills: one case per file under evaluations/, {name, skills, query, context,
# expected_behavior, success_criteria}.
OPENAI_DIR = "evaluations"
OPENAI_FIELDS = frozenset({"name", "skills", "query", "context", "expected_behavior", "success_criteria"})
_STEP = re.compile(r"^\s*step\s*\d+\s*[:.)-]\s*", re.I)
_SCRIPT_NAMED = re.compile(r"(?<![\w/.-])((?:\./)?(?:scripts/)?[\w.-]+\.(?:py|sh|js|mjs|ts|rb|pl))\b")


def _text_list(value: Any, key: str, path: Path) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v.strip()]
    raise EvalsError(f"{key} must be a list of strings, got {type(value).__name__}", where=path,
                     fix=f"write {key} as a JSON list of sentences")


def openai_evaluation(raw: Any, path: Path, skill_name: str, files: SkillFiles) -> tuple[dict[str, Any], list[str]]:
    """The native case dict one openai/skills evaluation file describes, and a note per decision.

    ``query`` is the prompt (``context`` ahead of it as the situation the user is in);
    ``success_criteria`` are judged assertions; an ``expected_behavior`` step naming one of
    the skill's scripts makes it the case's ``expected_script`` and adds ``runs <script>``,
    which is decided from the trace; every other step is a judged behaviour.
    """
    if not isinstance(raw, dict):
        raise EvalsError(f"an evaluation file holds one case as a JSON object, got {type(raw).__name__}",
                         where=path, fix="write {\"query\": ..., \"success_criteria\": [...]}")
    unknown = sorted(set(raw) - OPENAI_FIELDS)
    if unknown:
        hints = [f"{u!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, OPENAI_FIELDS, 1)) else repr(u)
                 for u in unknown]
        raise EvalsError(f"unknown field(s) {', '.join(hints)}", where=path,
                         fix=f"fix the spelling or remove the field; fields read: {', '.join(sorted(OPENAI_FIELDS))}")
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise EvalsError("no query (the user's request)", where=path, fix="give the case a non-empty query")
    notes = [f"openai/skills evaluation: id {path.stem!r} from the file name"]
    context = _text_list(raw.get("context"), "context", path)
    prompt = query if not context else " ".join(context) + "\n\n" + query
    if context:
        notes.append("context put ahead of the query as the user's situation")
    skills = _text_list(raw.get("skills"), "skills", path)
    case: dict[str, Any] = {"id": path.stem, "prompt": prompt}
    if skills and skill_name not in skills:
        case["expected_skill"], case["acceptable_skills"] = skills[0], skills[1:]
        notes.append(f"skills {skills} does not list {skill_name!r}: expects {skills[0]!r}")
    elif len(skills) > 1:
        case["acceptable_skills"] = [s for s in skills if s != skill_name]
    criteria = _text_list(raw.get("success_criteria"), "success_criteria", path)
    case["assertions"] = criteria
    if criteria:
        notes.append(f"{len(criteria)} success criteria judged one by one with evidence")
    steps = [_STEP.sub("", s) for s in _text_list(raw.get("expected_behavior"), "expected_behavior", path)]
    script = next((s for s in (_named_script(step, files) for step in steps) if s), None)
    if script:
        case["expected_script"] = script
        steps.append(f"runs {script}")
        notes.append(f"expected_behavior names {script}: 'runs {script}' is decided from the trace")
    case["expected_behavior"] = steps
    if raw.get("name"):
        notes.append(f"name {raw['name']!r} kept as a label only")
    return case, notes


def _named_script(step: str, files: SkillFiles) -> str | None:
    """The skill's own script a behaviour step names, if any."""
    for m in _SCRIPT_NAMED.finditer(step):
        norm = m.group(1).removeprefix("./")
        if files.exists(norm):
            return norm
        same = files.by_name(PurePosixPath(norm).name)
        if len(same) == 1:
            return same[0]
    return None
