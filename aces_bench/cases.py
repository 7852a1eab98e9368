"""Evaluation cases: one versioned model, read from a skill's ``evals/`` folder.

Both spellings are accepted: the public reference implementation's
(``prompt``/``expected_output``) and the paper's (``question``/``ground_truth``/
``expected_behavior``). The canonical form written back uses the first.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from aces_bench.errors import EvalsError, from_validation

EVALS_SCHEMA_VERSION = "1"
SAFE_CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
CaseKind = Literal[
    "explicit", "implicit", "contextual", "negative", "error_path", "security", "conflict", "upgrade"
]


class Check(BaseModel):
    """A deterministic check the in-sandbox verifier applies to the answer file.

    ``contains``/``not_contains``/``equals`` compare text (case-insensitive,
    whitespace-folded); ``regex`` searches; ``number`` finds a number within
    ``tolerance`` of ``value`` anywhere in the answer.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["contains", "not_contains", "equals", "regex", "number"]
    value: str | float
    tolerance: float = 0.0
    file: str | None = Field(default=None, description="workspace-relative file; default the answer file")

    @model_validator(mode="after")
    def _regex_compiles(self) -> Check:
        if self.kind == "regex":
            try:
                re.compile(str(self.value))
            except re.error as exc:
                raise ValueError(f"regex does not compile: {exc}") from None
        if self.kind == "number":
            float(self.value)
        return self


class FileSpec(BaseModel):
    """A fixture staged into the workspace: ``src`` relative to the skill folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    src: str
    dest: str

    @field_validator("src", "dest")
    @classmethod
    def _relative(cls, v: str) -> str:
        p = Path(v)
        if p.is_absolute() or ".." in p.parts or not v.strip():
            raise ValueError(f"path {v!r} must be relative and stay inside its folder (no '..')")
        return p.as_posix()


class EvalCase(BaseModel):
    """One evaluation case for a target skill."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str
    prompt: str = Field(alias="question")
    expected_output: str | None = Field(default=None, alias="ground_truth")
    kind: CaseKind | None = None
    assertions: list[str | Check] = Field(default_factory=list)
    expected_skill: str | None
    expected_script: str | None = None
    acceptable_skills: list[str] = Field(default_factory=list)
    files: list[FileSpec] = Field(default_factory=list)
    expected_behavior: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "id" in data and not isinstance(data["id"], str):
            data["id"] = str(data["id"])
        files = data.get("files")
        if isinstance(files, list):
            data["files"] = [
                {"src": f, "dest": "data/" + Path(f).name} if isinstance(f, str) else f for f in files
            ]
        return data

    @field_validator("id")
    @classmethod
    def _safe_id(cls, v: str) -> str:
        if not SAFE_CASE_ID.match(v):
            raise ValueError(
                f"case id {v!r} is not a safe identifier (letters, digits, '_', '-', '.'; at most 64)"
            )
        return v

    @property
    def is_negative_control(self) -> bool:
        return self.expected_skill is None

    @property
    def checks(self) -> list[Check]:
        return [a for a in self.assertions if isinstance(a, Check)]

    def content_hash(self) -> str:
        raw = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(raw).hexdigest()


class EvalSuite(BaseModel):
    """A skill's evaluation cases (``evals/evals.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = EVALS_SCHEMA_VERSION
    skill_name: str
    evals: list[EvalCase]

    @model_validator(mode="before")
    @classmethod
    def _default_expected_skill(cls, data: Any) -> Any:
        # An absent expected_skill means "the suite's skill"; an explicit null marks
        # a negative control. The distinction only exists before validation.
        if isinstance(data, dict) and isinstance(data.get("evals"), list):
            data = dict(data)
            name = data.get("skill_name")
            data["evals"] = [
                {**c, "expected_skill": name} if isinstance(c, dict) and "expected_skill" not in c else c
                for c in data["evals"]
            ]
        return data

    @model_validator(mode="after")
    def _unique_ids(self) -> EvalSuite:
        seen: set[str] = set()
        for i, case in enumerate(self.evals):
            if case.id in seen:
                raise ValueError(f"evals[{i}].id: case id {case.id!r} is used twice")
            seen.add(case.id)
        if not self.evals:
            raise ValueError("evals: no cases (add at least one case)")
        return self


def load_suite(skill_dir: Path, skill_name: str) -> EvalSuite:
    """Read ``<skill>/evals/evals.json`` and check its fixtures exist inside the skill."""
    path = Path(skill_dir) / "evals" / "evals.json"
    if not path.is_file():
        raise EvalsError(
            "no evals/evals.json for this skill",
            where=skill_dir,
            fix="add evals/evals.json with {skill_name, evals: [{id, prompt, ...}]}",
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EvalsError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            where=path,
            fix="fix the JSON syntax",
        ) from None
    except UnicodeDecodeError:
        raise EvalsError("file is not UTF-8", where=path, fix="re-save the file as UTF-8") from None
    if isinstance(raw, dict):
        raw.setdefault("skill_name", skill_name)
    try:
        suite = EvalSuite.model_validate(raw)
    except ValidationError as err:
        raise from_validation(err, cls=EvalsError, where=path, fix="correct the listed keys in evals.json") from None
    root = Path(skill_dir).resolve()
    for case in suite.evals:
        for f in case.files:
            src = (root / f.src).resolve()
            if not src.is_relative_to(root):
                raise EvalsError(
                    f"case {case.id!r}: fixture {f.src!r} resolves outside the skill folder",
                    where=path,
                    fix="keep fixtures inside the skill folder (for example under evals/files/)",
                )
            if not src.is_file():
                raise EvalsError(
                    f"case {case.id!r}: fixture {f.src!r} does not exist",
                    where=path,
                    fix=f"add the file at {root / f.src} or fix the path",
                )
    return suite
