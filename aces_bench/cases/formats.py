"""Evaluation asset files: where they live, how each format is read, the one form written.

A skill keeps its cases in exactly one of ``evals/evals.json``, ``evals/evals.jsonl``
or ``evals/evals.yaml`` (the reference implementation's shape, either spelling), and
may add an ``eval.config`` at its root (an ``evals`` array of prompt, expected
outcome and required credential names) and openai/skills' ``evaluations/*.json``
(one case per file, read beside the primary file). All feed the same ``EvalSuite``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aces_bench.cases.credentials import CredentialName
from aces_bench.cases.evalmd import find_eval_md, intent_cases, read_intent
from aces_bench.cases.model import (
    SAFE_CASE_ID,
    EvalCase,
    EvalSuite,
    FileSpec,
    canonical_case,
    canonical_suite,
)
from aces_bench.cases.readers import (
    OPENAI_DIR,
    CaseReading,
    SkillFiles,
    derived_id,
    openai_evaluation,
    suite_payload,
)
from aces_bench.cases.safety import check_case_fixtures, read_asset_text
from aces_bench.core.errors import EvalsError, from_validation
from aces_bench.core.io import load_yaml, write_text
from aces_bench.core.registry import Registry

EVALS_FILES = ("evals/evals.json", "evals/evals.jsonl", "evals/evals.yaml", "evals/evals.yml")
# SkillEvaluator (the paper's implementation) reads the first of these and nothing else.
SKILLEVALUATOR_FILES = (*EVALS_FILES, "evals/dataset.json", "evals/dataset.jsonl")
# Files only SkillEvaluator writes or reads: a folder holding one is SkillEvaluator's.
SKILLEVALUATOR_MARKERS = ("evals/dataset.json", "evals/dataset.jsonl", "evals/config.yml", "evals/config.yaml")
_DATASET = re.compile(r"^(evals|dataset)[\w.-]*\.(json|jsonl|ya?ml)$")
EVAL_CONFIG = "eval.config"
# evals2.json, evals-edge.yaml, evals_more.jsonl: further case files beside the primary one.
EXTRA_EVALS = re.compile(r"^evals[\w.-]*\.(json|jsonl|ya?ml)$")
DEFAULT_EVALS_FILE = EVALS_FILES[0]
_HEADER_KEYS = {"schema_version", "skill_name", "notes"}


def _json_error(exc: json.JSONDecodeError, path: Path, line: int | None = None) -> EvalsError:
    where = f"line {line}: " if line is not None else ""
    pos = f"column {exc.colno}" if line is not None else f"line {exc.lineno} column {exc.colno}"
    return EvalsError(f"{where}not valid JSON: {exc.msg} at {pos}", where=path, fix="fix the JSON syntax")


def _yaml_load(text: str, path: Path) -> Any:
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise EvalsError(
            f"not valid YAML{at}: {getattr(exc, 'problem', None) or exc}",
            where=path,
            fix="fix the YAML syntax (quote values that contain ':' or start with a special character)",
        ) from None


def _read_json(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(exc, path) from None


def _read_jsonl(text: str, path: Path) -> Any:
    header: dict[str, Any] = {}
    cases = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _json_error(exc, path, n) from None
        # A first line holding only suite keys is the header (schema_version, skill_name).
        if not cases and not header and isinstance(item, dict) and item and set(item) <= _HEADER_KEYS:
            header = item
            continue
        cases.append(item)
    return {**header, "evals": cases}


# Evaluation-file readers by suffix: ``read(text, path) -> payload`` (a list of cases or an
# object with ``evals``, the shapes ``readers.py`` maps). A plugin adds a format with one
# ``EVAL_FILE_READERS.register(".csv", "my_plugin.reader:read")``: ``evals/evals.csv`` is
# then a skill's evals file like the built-in ones (docs/extending.md).
EVAL_FILE_READERS: Registry[Callable[[str, Path], Any]] = Registry("evaluation file type", where="evals file")
EVAL_FILE_READERS.register(".json", _read_json)
EVAL_FILE_READERS.register(".jsonl", _read_jsonl)
EVAL_FILE_READERS.register(".yaml", _yaml_load)
EVAL_FILE_READERS.register(".yml", _yaml_load)
_BUILTIN_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")


def evals_files() -> tuple[str, ...]:
    """The primary evals file names, the built-in ones first, then a plugin format's ``evals/evals<suffix>``."""
    extra = [f"evals/evals{sfx}" for sfx in EVAL_FILE_READERS.names() if sfx not in _BUILTIN_SUFFIXES]
    return (*EVALS_FILES, *extra)


def parse_evals_text(text: str, path: Path) -> Any:
    """The raw payload of an evals file, by its suffix; syntax errors name the line."""
    suffix = path.suffix
    if suffix not in EVAL_FILE_READERS:
        extra = [s for s in EVAL_FILE_READERS.names() if s not in _BUILTIN_SUFFIXES]
        raise EvalsError(f"unknown evaluation file type {suffix!r}", where=path,
                         fix="use .json, .jsonl or .yaml" + (f" (or a plugin's {', '.join(extra)})" if extra else ""))
    return EVAL_FILE_READERS.get(suffix)(text, path)


class ConfigCase(BaseModel):
    """One session of the ``eval.config`` contract."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    prompt: str = Field(min_length=1)
    expected: str | None = Field(default=None, description="the expected outcome, in words")
    credentials: list[CredentialName] = Field(default_factory=list, description="names of host environment variables")
    files: list[str | FileSpec] = Field(default_factory=list)


class EvalConfig(BaseModel):
    """The ``eval.config`` file: an ``evals`` array, one isolated session per case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill_name: str | None = None
    evals: list[ConfigCase] = Field(min_length=1)


def config_case_payload(c: ConfigCase) -> dict[str, Any]:
    """The EvalCase payload an ``eval.config`` entry describes."""
    out: dict[str, Any] = {"id": c.id or derived_id(c.prompt), "prompt": c.prompt}
    if c.expected is not None:
        out["expected_output"] = c.expected
    if c.credentials:
        out["required_credentials"] = list(c.credentials)
    if c.files:
        out["files"] = [f if isinstance(f, str) else f.model_dump() for f in c.files]
    return out


def parse_eval_config(text: str, path: Path) -> EvalConfig:
    """Read ``eval.config`` (JSON, or YAML when it does not look like JSON)."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _json_error(exc, path) from None
    else:
        raw = _yaml_load(text, path)
    try:
        return EvalConfig.model_validate(raw)
    except ValidationError as err:
        raise from_validation(
            err, cls=EvalsError, where=path, fix="correct the listed keys in eval.config ({evals: [{prompt, expected, credentials}]})"
        ) from None


@dataclass
class EvalsFile:
    """One evals file of a skill and the cases read from it."""

    path: Path
    suite: EvalSuite
    readings: list[CaseReading] = field(default_factory=list)


@dataclass
class Assets:
    """What a skill folder holds: its evals files, the eval.config cases and EVAL.md's, apart.

    ``evals_path``/``evals_suite`` are the primary file (``evals/evals.*``), the one
    ``dataset create`` and ``refine`` write; ``extra_files`` are the others
    (``evals/evals2.json``, ...), read and never written.
    """

    skill_dir: Path
    skill_name: str
    evals_path: Path | None = None
    evals_suite: EvalSuite | None = None
    extra_files: list[EvalsFile] = field(default_factory=list)
    config_path: Path | None = None
    config_cases: list[EvalCase] = field(default_factory=list)
    intent_path: Path | None = None
    intent_cases: list[EvalCase] = field(default_factory=list)
    readings: list[CaseReading] = field(default_factory=list)
    rule: str = "aces-bench"  # which file rule chose the evals files (EvalsSelection.rule)
    unread: list[tuple[Path, str]] = field(default_factory=list)  # evals files left out, and why

    @property
    def evals_cases(self) -> list[EvalCase]:
        return list(self.evals_suite.evals) if self.evals_suite else []

    @property
    def extra_cases(self) -> list[EvalCase]:
        return [c for f in self.extra_files for c in f.suite.evals]

    def origin(self, case_id: str) -> Path | None:
        """The file a case was read from."""
        if any(c.id == case_id for c in self.evals_cases):
            return self.evals_path
        for f in self.extra_files:
            if any(c.id == case_id for c in f.suite.evals):
                return f.path
        if any(c.id == case_id for c in self.config_cases):
            return self.config_path
        return None

    def sources(self) -> list[tuple[list[EvalCase], Path]]:
        """Each group of cases with the file it came from: EVAL.md's first (the author's intent leads)."""
        out: list[tuple[list[EvalCase], Path]] = []
        if self.intent_path is not None and self.intent_cases:
            out.append((self.intent_cases, self.intent_path))
        if self.evals_path is not None:
            out.append((self.evals_cases, self.evals_path))
        out += [(list(f.suite.evals), f.path) for f in self.extra_files]
        if self.config_path is not None:
            out.append((self.config_cases, self.config_path))
        return out


def find_evals_file(skill_dir: Path) -> Path | None:
    """The skill's one primary evals file, or None; two or more is an error naming them."""
    found = [Path(skill_dir) / rel for rel in evals_files() if (Path(skill_dir) / rel).is_file()]
    if len(found) > 1:
        names = " and ".join(p.relative_to(skill_dir).as_posix() for p in found)
        raise EvalsError(
            f"more than one evaluation file: {names}",
            where=skill_dir,
            fix="keep exactly one of evals/evals.json, evals/evals.jsonl, evals/evals.yaml",
        )
    return found[0] if found else None


def find_extra_evals_files(skill_dir: Path) -> list[Path]:
    """Further evals files beside the primary one (``evals/evals2.json``, ``evals/evals-edge.yaml``)."""
    base = Path(skill_dir) / "evals"
    if not base.is_dir():
        return []
    primary = {Path(rel).name for rel in evals_files()}
    return sorted(
        p for p in base.iterdir()
        if p.is_file() and p.name not in primary and EXTRA_EVALS.match(p.name)
    )


@dataclass
class EvalsSelection:
    """Which evals files of a skill are read, by which rule, and the ones left out (with why)."""

    rule: str
    primary: Path | None
    extra: list[Path] = field(default_factory=list)
    unread: list[tuple[Path, str]] = field(default_factory=list)


def _evals_like(skill_dir: Path) -> list[Path]:
    base = Path(skill_dir) / "evals"
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_file() and _DATASET.match(p.name))


def is_skillevaluator_folder(skill_dir: Path) -> bool:
    """Whether a skill folder is laid out for SkillEvaluator, whose file rule then applies.

    It is when ``evals/`` holds a file only SkillEvaluator uses (``dataset.json``,
    ``dataset.jsonl``, ``config.yml``), or when its first evals file in SkillEvaluator's
    order is a top-level JSON list of cases (SkillEvaluator's own shape; aces-bench's
    format and skill-creator's are an object ``{skill_name, evals}``).
    """
    skill_dir = Path(skill_dir)
    if any((skill_dir / m).is_file() for m in SKILLEVALUATOR_MARKERS):
        return True
    first = next((skill_dir / f for f in SKILLEVALUATOR_FILES if (skill_dir / f).is_file()), None)
    if first is None or first.suffix != ".json":
        return False
    try:
        head = first.read_text(encoding="utf-8", errors="replace").lstrip()[:1]
    except OSError:
        return False
    return head == "["


def _relname(path: Path, skill_dir: Path) -> str:
    try:
        return path.relative_to(skill_dir).as_posix()
    except ValueError:
        return str(path)


def select_evals_files(skill_dir: Path, evals_file: str | None = None) -> EvalsSelection:
    """The evals files a study reads for one skill (module doc of the three rules).

    - ``skill.evals_file=evals/x.json``: that file only;
    - a SkillEvaluator folder (``is_skillevaluator_folder``): the first of
      ``SKILLEVALUATOR_FILES``, as SkillEvaluator reads it;
    - otherwise aces-bench's own rule: exactly one ``evals/evals.*`` plus any further
      ``evals*.json|jsonl|yaml`` beside it, merged (ids must not repeat).

    Every other evals file is listed as not read, with how to select it.
    """
    skill_dir = Path(skill_dir)
    present = _evals_like(skill_dir)
    if evals_file:
        chosen = (skill_dir / evals_file)
        if ".." in Path(evals_file).parts or Path(evals_file).is_absolute() or not chosen.is_file():
            have = ", ".join(_relname(p, skill_dir) for p in present) or "none"
            raise EvalsError(f"skill.evals_file={evals_file} is not a file in this skill (evals files here: {have})",
                             where=skill_dir, fix="give a path relative to the skill folder, e.g. "
                             "skill.evals_file=evals/evals2.json, or drop skill.evals_file")
        unread = [(p, f"not read: skill.evals_file={evals_file} selects one file") for p in present
                  if p.resolve() != chosen.resolve()]
        return EvalsSelection("skill.evals_file", chosen, [], unread)
    if is_skillevaluator_folder(skill_dir):
        first = next((skill_dir / f for f in SKILLEVALUATOR_FILES if (skill_dir / f).is_file()), None)
        order = ", ".join(Path(f).name for f in SKILLEVALUATOR_FILES)
        unread = [(p, f"not read: SkillEvaluator reads only the first of {order}"
                      f"{f' (here {_relname(first, skill_dir)})' if first else ''}; "
                      f"select it with skill.evals_file={_relname(p, skill_dir)}")
                  for p in present if first is None or p != first]
        return EvalsSelection("SkillEvaluator", first, [], unread)
    primary = find_evals_file(skill_dir)
    extra = find_extra_evals_files(skill_dir) + find_openai_evaluations(skill_dir)
    unread = [(p, f"not read: select it with skill.evals_file={_relname(p, skill_dir)}") for p in present
              if p != primary and p not in extra]
    return EvalsSelection("aces-bench", primary, extra, unread)


def find_openai_evaluations(skill_dir: Path) -> list[Path]:
    """openai/skills' case files: ``evaluations/*.json`` at the skill's root, one case each."""
    base = Path(skill_dir) / OPENAI_DIR
    return sorted(p for p in base.glob("*.json") if p.is_file()) if base.is_dir() else []


def has_eval_assets(skill_dir: Path) -> bool:
    """True when the skill holds any evaluation asset that gives cases."""
    skill_dir = Path(skill_dir)
    return (
        any((skill_dir / f).is_file() for f in (*SKILLEVALUATOR_FILES, EVAL_CONFIG))
        or bool(find_extra_evals_files(skill_dir))
        or bool(find_openai_evaluations(skill_dir))
        or find_eval_md(skill_dir) is not None
    )


def _check_skill_name(raw: Any, skill_name: str, path: Path) -> Any:
    if isinstance(raw, dict):
        given = raw.get("skill_name")
        if given is not None and given != skill_name:
            raise EvalsError(
                f"skill_name {given!r} does not match the skill's name {skill_name!r} in SKILL.md",
                where=f"{path}:skill_name",
                fix=f"set skill_name to {skill_name!r} (or leave it out)",
            )
        raw = {**raw, "skill_name": skill_name}
    return raw


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def read_evals(path: Path, skill_name: str, root: Path) -> EvalsFile:
    """Validate one evals file into a suite (fixtures not yet checked), with how each case was read."""
    raw = parse_evals_text(read_asset_text(path, root=root), path)
    files = SkillFiles(root)
    openai_notes: list[str] = []
    if path.parent.name == OPENAI_DIR and path.parent.parent.resolve() == root:
        case, openai_notes = openai_evaluation(raw, path, skill_name, files)
        raw = {"evals": [case]}
    payload, readings = suite_payload(raw, skill_name=skill_name, files=files, path=path, file=_relative(path, root))
    for reading in readings:
        if openai_notes:
            reading.format = "openai/skills evaluation"
            reading.notes[:0] = openai_notes
    payload = _check_skill_name(payload, skill_name, path)
    try:
        suite = EvalSuite.model_validate(payload)
    except ValidationError as err:
        raise from_validation(err, cls=EvalsError, where=path, fix=f"correct the listed keys in {path.name}") from None
    except ValueError as exc:  # a migration refusal raised outside pydantic's wrapping
        raise EvalsError(str(exc), where=path, fix="write schema_version 2 or leave it out") from None
    return EvalsFile(path=path, suite=suite, readings=readings)


def read_evals_file(path: Path, skill_name: str, root: Path) -> EvalSuite:
    """Validate one evals file into a suite (fixtures not yet checked)."""
    return read_evals(path, skill_name, root).suite


def read_config_cases(path: Path, skill_name: str, root: Path) -> list[EvalCase]:
    """The cases an ``eval.config`` describes, validated as EvalCases."""
    config = parse_eval_config(read_asset_text(path, root=root), path)
    _check_skill_name({"skill_name": config.skill_name}, skill_name, path)
    payload = {"skill_name": skill_name, "evals": [config_case_payload(c) for c in config.evals]}
    try:
        return list(EvalSuite.model_validate(payload).evals)
    except ValidationError as err:
        raise from_validation(err, cls=EvalsError, where=path, fix="correct the listed keys in eval.config") from None


def read_assets(skill_dir: Path, skill_name: str, evals_file: str | None = None) -> Assets:
    """Read every evaluation asset of a skill, each validated on its own (the evals files
    that ``select_evals_files`` picks; the others are listed in ``Assets.unread``)."""
    skill_dir = Path(skill_dir)
    root = skill_dir.resolve()
    selection = select_evals_files(skill_dir, evals_file)
    assets = Assets(skill_dir=skill_dir, skill_name=skill_name, rule=selection.rule, unread=selection.unread)
    assets.evals_path = selection.primary
    if assets.evals_path is not None:
        primary = read_evals(assets.evals_path, skill_name, root)
        assets.evals_suite = primary.suite
        assets.readings += primary.readings
    for path in selection.extra:
        extra = read_evals(path, skill_name, root)
        assets.extra_files.append(extra)
        assets.readings += extra.readings
    config = skill_dir / EVAL_CONFIG
    if config.is_file():
        assets.config_path = config
        assets.config_cases = read_config_cases(config, skill_name, root)
        assets.readings += [CaseReading(case_id=c.id, file=EVAL_CONFIG, format="eval.config",
                                        notes=["expected read as expected_output"] if c.expected_output else [])
                            for c in assets.config_cases]
    return assets


def check_expected_scripts(assets: Assets) -> None:
    """A case's ``expected_script`` in its own skill must exist, or execution can never pass."""
    root = assets.skill_dir.resolve()
    for cases, where in assets.sources():
        for i, case in enumerate(cases):
            script = case.expected_script
            if not script or case.expected_skill != assets.skill_name:
                continue  # another skill's script is checked where that skill is loaded
            path = (root / script).resolve()
            if not path.is_relative_to(root) or not path.is_file():
                raise EvalsError(
                    f"evals[{i}].expected_script: case {case.id!r} names {script!r}, which is not a file in the skill",
                    where=where or assets.skill_dir,
                    fix=f"fix the path (relative to the skill folder, e.g. scripts/run.py) or add {root / script}",
                )


def check_fixtures(assets: Assets) -> None:
    """Every fixture of every case exists inside the skill folder and is within limits."""
    root = assets.skill_dir.resolve()
    seen: dict[str, int] = {}  # a fixture shared by many cases is checked once
    for cases, where in assets.sources():
        for case in cases:
            check_case_fixtures(root, case.id, [f.src for f in case.files], where or assets.skill_dir, seen)


def _check_unique_ids(assets: Assets) -> None:
    seen: dict[str, Path] = {}
    for cases, where in assets.sources():
        for c in cases:
            if c.id in seen:
                raise EvalsError(
                    f"case id {c.id!r} is used in both {_relative(seen[c.id], assets.skill_dir.resolve())} "
                    f"and {_relative(where, assets.skill_dir.resolve())}",
                    where=where,
                    fix="give one of the cases another id, or describe the case in one file only",
                )
            seen[c.id] = where


def _apply_intent(assets: Assets) -> None:
    """EVAL.md at run time: its cases replace their stale copies, its behaviors lead generated cases.

    The author's intent outranks anything generated: a case ``dataset create`` copied
    from EVAL.md (``source: eval_md``) is replaced by the file's current version; a
    generated (template or LLM) case with the id of an EVAL.md case is renamed
    ``<id>-generated`` (dropped when that id is taken too), with a note; and every
    generated case expecting the skill gets EVAL.md's must-do and must-never
    behaviors first. A case an author wrote by hand with the same id as an EVAL.md
    case is kept, and the EVAL.md one left out, with a note: both are the author's,
    and the hand-written one is the more specific.
    """
    path = find_eval_md(assets.skill_dir)
    if path is None:
        return
    intent = read_intent(assets.skill_dir)
    fresh = intent_cases(intent, assets.skill_name, path)
    by_id = {c.id: c for c in fresh}
    rel = _relative(path, assets.skill_dir.resolve())
    root = assets.skill_dir.resolve()
    readings = {(r.file, r.case_id): r for r in assets.readings}
    placed: set[str] = set()  # EVAL.md cases already in a file, refreshed where they stand
    taken = {c.id for cases, _ in assets.sources() for c in cases} | set(by_id)
    outranked: dict[str, list[str]] = {}  # EVAL.md case id -> what became of generated cases with its id

    def refresh(cases: list[EvalCase], where: Path) -> list[EvalCase]:
        out = []
        for c in cases:
            reading = readings.get((_relative(where, root), c.id))
            notes = reading.notes if reading else []
            if c.source == "eval_md" and c.id in by_id:
                placed.add(c.id)
                current = carry_proposals(by_id[c.id], c)
                if current != c:
                    notes.append(f"replaced by the current {rel} (the author's intent outranks a copy)")
                out.append(current)
                continue
            if c.id in by_id and c.is_generated:
                renamed = f"{c.id}-generated"
                here = _relative(where, root)
                if renamed in taken or not SAFE_CASE_ID.match(renamed):
                    outranked.setdefault(c.id, []).append(
                        f"outranks the generated case {c.id!r} of {here}, left out ({renamed!r} is taken)")
                    continue
                taken.add(renamed)
                outranked.setdefault(c.id, []).append(
                    f"outranks the generated case {c.id!r} of {here}, renamed {renamed!r}")
                if reading is not None:
                    reading.case_id = renamed
                notes.append(f"renamed from {c.id!r}: the {rel} case with that id outranks a generated one")
                c = c.model_copy(update={"id": renamed})
            elif c.id in by_id:
                placed.add(c.id)
                notes.append(f"kept; the {rel} case with this id is left out")
            if c.is_generated and not c.is_negative_control and intent.directives:
                lead = [d for d in intent.directives if d not in c.expected_behavior]
                if lead:
                    c = c.model_copy(update={"expected_behavior": lead + list(c.expected_behavior)})
                    notes.append(f"{len(lead)} behavior(s) from {rel} put first")
            out.append(c)
        return out

    # model_copy, not validation: the suites were validated when read.
    if assets.evals_suite is not None and assets.evals_path is not None:
        assets.evals_suite = assets.evals_suite.model_copy(
            update={"evals": refresh(assets.evals_cases, assets.evals_path)})
    for f in assets.extra_files:
        f.suite = f.suite.model_copy(update={"evals": refresh(list(f.suite.evals), f.path)})
    if assets.config_path is not None:
        assets.config_cases = refresh(assets.config_cases, assets.config_path)
    assets.intent_path = path
    assets.intent_cases = [c for c in fresh if c.id not in placed]
    assets.readings += [CaseReading(case_id=c.id, file=rel, format="EVAL.md",
                                    notes=[c.note or "", *outranked.get(c.id, [])])
                        for c in assets.intent_cases]
    pos = {key: n for n, key in enumerate(
        (_relative(where, root), c.id) for cases, where in assets.sources() for c in cases)}
    assets.readings = sorted((r for r in assets.readings if (r.file, r.case_id) in pos),
                             key=lambda r: pos[(r.file, r.case_id)])


def carry_proposals(new: EvalCase, old: EvalCase | None) -> EvalCase:
    """Keep what an earlier ``refine`` proposed for a case that is re-derived with the same id."""
    if old is None or not old.proposed:
        return new
    update = {name: getattr(old, name) for name in old.proposed}
    return new.model_copy(update={**update, "proposed": list(old.proposed)})


def load_assets(skill_dir: Path, skill_name: str, evals_file: str | None = None) -> Assets:
    """Every evaluation asset of a skill (EVAL.md included), read, cross-checked and with fixtures checked."""
    skill_dir = Path(skill_dir)
    assets = read_assets(skill_dir, skill_name, evals_file)
    _apply_intent(assets)
    if not any(cases for cases, _ in assets.sources()):
        raise EvalsError(
            "no evaluation cases: none of evals/evals.json, evals/evals.jsonl, evals/evals.yaml, eval.config "
            "or EVAL.md (with questions or trigger queries) exists",
            where=skill_dir,
            fix="add evals/evals.json with {skill_name, evals: [{id, prompt, ...}]}, "
            "or run 'aces-bench dataset create <skill-dir>'",
        )
    _check_unique_ids(assets)
    check_fixtures(assets)
    check_expected_scripts(assets)
    return assets


def suite_of(assets: Assets) -> EvalSuite:
    """One suite of every case the assets hold, in reading order."""
    notes = list(assets.evals_suite.notes) if assets.evals_suite else []
    cases = [c for cases, _ in assets.sources() for c in cases]
    return EvalSuite(skill_name=assets.skill_name, evals=cases, notes=notes)


def load_suite(skill_dir: Path, skill_name: str, evals_file: str | None = None) -> EvalSuite:
    """All evaluation cases of a skill (evals files, then eval.config), fixtures checked.

    Raises EvalsError naming the file and key for any malformed asset, a case id
    used in two files, or no cases at all. (``select_evals_files(...).unread`` lists
    the evals files the folder's rule leaves out.)
    """
    return suite_of(load_assets(skill_dir, skill_name, evals_file))


def render_suite(suite: EvalSuite, suffix: str = ".json") -> str:
    """The canonical text of a suite in one of the evals formats (stable, sorted keys)."""
    data = canonical_suite(suite)
    if suffix == ".json":
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if suffix == ".jsonl":
        header = {k: v for k, v in data.items() if k != "evals"}
        lines = [json.dumps(header, sort_keys=True, ensure_ascii=False)]
        lines += [json.dumps(canonical_case(c, suite.skill_name), sort_keys=True, ensure_ascii=False) for c in suite.evals]
        return "\n".join(lines) + "\n"
    if suffix in (".yaml", ".yml"):
        return yaml.safe_dump(data, sort_keys=True, allow_unicode=True, width=100, default_flow_style=False)
    raise EvalsError(f"unknown evaluation file type {suffix!r}", where=suffix, fix="use .json, .jsonl or .yaml")


def write_suite(path: Path, suite: EvalSuite) -> Path:
    """Atomically write a suite in its canonical form; the format follows the suffix (JSON by default)."""
    path = Path(path)
    return write_text(path, render_suite(suite, path.suffix or ".json"))
