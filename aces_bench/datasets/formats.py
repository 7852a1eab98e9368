"""Evaluation asset files: where they live, how each format is read, the one form written.

A skill keeps its cases in exactly one of ``evals/evals.json``, ``evals/evals.jsonl``
or ``evals/evals.yaml`` (the reference implementation's shape, either spelling), and
may add an ``eval.config`` at its root (an ``evals`` array of prompt, expected
outcome and required credential names). Both feed the same ``EvalSuite``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aces_bench.datasets.credentials import CredentialName
from aces_bench.datasets.model import (
    EvalCase,
    EvalSuite,
    FileSpec,
    canonical_case,
    canonical_suite,
)
from aces_bench.datasets.safety import check_case_fixtures, read_asset_text
from aces_bench.errors import EvalsError, from_validation
from aces_bench.io import write_text

EVALS_FILES = ("evals/evals.json", "evals/evals.jsonl", "evals/evals.yaml", "evals/evals.yml")
EVAL_CONFIG = "eval.config"
EVAL_MD = "EVAL.md"
DEFAULT_EVALS_FILE = EVALS_FILES[0]
_HEADER_KEYS = {"schema_version", "skill_name", "notes"}


def _json_error(exc: json.JSONDecodeError, path: Path, line: int | None = None) -> EvalsError:
    where = f"line {line}: " if line is not None else ""
    pos = f"column {exc.colno}" if line is not None else f"line {exc.lineno} column {exc.colno}"
    return EvalsError(f"{where}not valid JSON: {exc.msg} at {pos}", where=path, fix="fix the JSON syntax")


def _yaml_load(text: str, path: Path) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise EvalsError(
            f"not valid YAML{at}: {getattr(exc, 'problem', None) or exc}",
            where=path,
            fix="fix the YAML syntax (quote values that contain ':' or start with a special character)",
        ) from None


def parse_evals_text(text: str, path: Path) -> Any:
    """The raw payload of an evals file, by its suffix; syntax errors name the line."""
    suffix = path.suffix
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise _json_error(exc, path) from None
    if suffix == ".jsonl":
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
    if suffix in (".yaml", ".yml"):
        return _yaml_load(text, path)
    raise EvalsError(f"unknown evaluation file type {suffix!r}", where=path, fix="use .json, .jsonl or .yaml")


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


def derived_id(prompt: str) -> str:
    """A case id from its prompt: stable across reorderings and whitespace edits."""
    return "case-" + hashlib.sha256(" ".join(prompt.split()).encode()).hexdigest()[:10]


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
class Assets:
    """What a skill folder holds: the evals file's suite and the eval.config cases, apart."""

    skill_dir: Path
    skill_name: str
    evals_path: Path | None = None
    evals_suite: EvalSuite | None = None
    config_path: Path | None = None
    config_cases: list[EvalCase] = field(default_factory=list)

    @property
    def evals_cases(self) -> list[EvalCase]:
        return list(self.evals_suite.evals) if self.evals_suite else []

    def origin(self, case_id: str) -> Path | None:
        """The file a case was read from."""
        if any(c.id == case_id for c in self.evals_cases):
            return self.evals_path
        if any(c.id == case_id for c in self.config_cases):
            return self.config_path
        return None


def find_evals_file(skill_dir: Path) -> Path | None:
    """The skill's one evals file, or None; two or more is an error naming them."""
    found = [Path(skill_dir) / rel for rel in EVALS_FILES if (Path(skill_dir) / rel).is_file()]
    if len(found) > 1:
        names = " and ".join(p.relative_to(skill_dir).as_posix() for p in found)
        raise EvalsError(
            f"more than one evaluation file: {names}",
            where=skill_dir,
            fix="keep exactly one of evals/evals.json, evals/evals.jsonl, evals/evals.yaml",
        )
    return found[0] if found else None


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


def read_evals_file(path: Path, skill_name: str, root: Path) -> EvalSuite:
    """Validate one evals file into a suite (fixtures not yet checked)."""
    raw = parse_evals_text(read_asset_text(path, root=root), path)
    if isinstance(raw, list):
        raw = {"evals": raw}
    raw = _check_skill_name(raw, skill_name, path)
    try:
        return EvalSuite.model_validate(raw)
    except ValidationError as err:
        raise from_validation(err, cls=EvalsError, where=path, fix=f"correct the listed keys in {path.name}") from None
    except ValueError as exc:  # a migration refusal raised outside pydantic's wrapping
        raise EvalsError(str(exc), where=path, fix="write schema_version 2 or leave it out") from None


def read_config_cases(path: Path, skill_name: str, root: Path) -> list[EvalCase]:
    """The cases an ``eval.config`` describes, validated as EvalCases."""
    config = parse_eval_config(read_asset_text(path, root=root), path)
    _check_skill_name({"skill_name": config.skill_name}, skill_name, path)
    payload = {"skill_name": skill_name, "evals": [config_case_payload(c) for c in config.evals]}
    try:
        return list(EvalSuite.model_validate(payload).evals)
    except ValidationError as err:
        raise from_validation(err, cls=EvalsError, where=path, fix="correct the listed keys in eval.config") from None


def read_assets(skill_dir: Path, skill_name: str) -> Assets:
    """Read every evaluation asset of a skill, each validated on its own."""
    skill_dir = Path(skill_dir)
    root = skill_dir.resolve()
    assets = Assets(skill_dir=skill_dir, skill_name=skill_name)
    assets.evals_path = find_evals_file(skill_dir)
    if assets.evals_path is not None:
        assets.evals_suite = read_evals_file(assets.evals_path, skill_name, root)
    config = skill_dir / EVAL_CONFIG
    if config.is_file():
        assets.config_path = config
        assets.config_cases = read_config_cases(config, skill_name, root)
    return assets


def check_expected_scripts(assets: Assets) -> None:
    """A case's ``expected_script`` in its own skill must exist, or execution can never pass."""
    root = assets.skill_dir.resolve()
    for cases, where in ((assets.evals_cases, assets.evals_path), (assets.config_cases, assets.config_path)):
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
    for cases, where in ((assets.evals_cases, assets.evals_path), (assets.config_cases, assets.config_path)):
        for case in cases:
            check_case_fixtures(root, case.id, [f.src for f in case.files], where or assets.skill_dir, seen)


def load_suite(skill_dir: Path, skill_name: str) -> EvalSuite:
    """All evaluation cases of a skill (evals file, then eval.config), fixtures checked.

    Raises EvalsError naming the file and key for any malformed asset, a case id
    used in both files, or no cases at all.
    """
    skill_dir = Path(skill_dir)
    assets = read_assets(skill_dir, skill_name)
    if assets.evals_path is None and assets.config_path is None:
        raise EvalsError(
            "no evaluation cases: none of evals/evals.json, evals/evals.jsonl, evals/evals.yaml or eval.config exists",
            where=skill_dir,
            fix="add evals/evals.json with {skill_name, evals: [{id, prompt, ...}]}, "
            "or run 'aces-bench dataset create <skill-dir>'",
        )
    ids = {c.id for c in assets.evals_cases}
    for c in assets.config_cases:
        if c.id in ids:
            raise EvalsError(
                f"case id {c.id!r} is used in both {assets.evals_path.name} and {EVAL_CONFIG}",  # type: ignore[union-attr]
                where=assets.config_path,
                fix="give the eval.config case another id, or describe the case in one file only",
            )
    check_fixtures(assets)
    check_expected_scripts(assets)
    notes = list(assets.evals_suite.notes) if assets.evals_suite else []
    return EvalSuite(skill_name=skill_name, evals=assets.evals_cases + assets.config_cases, notes=notes)


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
