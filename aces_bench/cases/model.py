"""The evaluation-case model: one versioned pydantic model for every asset format.

Both spellings are read: the public reference implementation's (``prompt``,
``expected_output``, ``assertions``; its skill-creator variant calls the latter
``expectations``) and the paper's (``question``, ``ground_truth``). One canonical
form is written (``canonical_suite``): the reference implementation's names, keys
sorted, defaults left out.

Versions: unversioned payloads (the reference implementation writes none) and
``schema_version: "1"`` are migrated on read by ``EvalSuite``'s ``mode="before"``
validator; version 2 added ``required_credentials``, ``source``, ``note``,
``proposed``, ``status``, ``judged_only`` and the suite's ``notes``.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from aces_bench.cases.credentials import CredentialName
from aces_bench.inputs.skills import CONTROL_CHARS, SAFE_NAME

EVALS_SCHEMA_VERSION = "2"
READABLE_VERSIONS = ("1", "2")
# \Z, not $: $ also matches before a final newline, which would let "id\n" through.
SAFE_CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
CaseKind = Literal[
    "explicit", "implicit", "contextual", "negative", "error_path", "security", "conflict", "upgrade"
]
CASE_KINDS: tuple[str, ...] = CaseKind.__args__  # type: ignore[attr-defined]
# Who wrote a case. "author" cases are never replaced by `dataset create`; "eval_md" cases
# are re-derived from EVAL.md (the author's file) on every create; the others are generated.
CaseSource = Literal["author", "eval_md", "template", "llm"]
GENERATED_SOURCES = frozenset({"template", "llm"})
ProposedField = Literal["expected_output", "expected_behavior"]
CaseStatus = Literal["ready", "draft"]

# (canonical name, other spellings accepted on read)
_SPELLINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("prompt", ("question",)),
    ("expected_output", ("ground_truth",)),
    ("assertions", ("expectations",)),
    ("required_credentials", ("credentials",)),
)
# Fields added in schema version 2: left out of the content hash at their defaults so
# every case written before them keeps its hash (task ids are content-addressed on it).
_V2_FIELDS = ("required_credentials", "source", "note", "proposed", "status", "judged_only")


def _relative_path(v: str, what: str) -> str:
    p = PurePosixPath(v.replace("\\", "/"))
    if not v.strip() or p.is_absolute() or ".." in p.parts:
        raise ValueError(f"{what} must be relative and stay inside its folder (no '..')")
    if CONTROL_CHARS.search(v):
        raise ValueError(f"{what} holds a control character; remove it")
    return p.as_posix()


class Check(BaseModel):
    """A deterministic check the in-sandbox verifier applies to the answer file.

    ``contains``/``not_contains``/``equals`` compare text (case-insensitive,
    whitespace-folded); ``regex`` searches; ``number`` judges the answer's stated
    number against ``value`` within ``tolerance``. Strict by default
    (``aces_bench/verifier/check_answer.py``, docs/answer-checks.md): a bounded answer,
    no dump of the input, no hedge (alternatives offered for the value), and with
    ``label`` the number the answer attaches to that label; ``match: lenient`` is the loose rule (anywhere).
    ``written`` checks that a regular file matching the glob ``value`` is written at ``file``
    (a file or a folder) and well formed for its type (``check_answer.well_formed``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["contains", "not_contains", "equals", "regex", "number", "written"]
    value: str | float
    tolerance: float = Field(default=0.0, ge=0)
    file: str | None = Field(default=None, description="workspace-relative file; default the answer file")
    label: str | None = Field(default=None, min_length=1,
                              description="number checks: the quantity's name in the answer ('total', 'p95')")
    match: Literal["strict", "lenient"] = Field(default="strict", description="lenient: anywhere in any answer")
    max_chars: int | None = Field(default=None, ge=1, description="strict: the longest answer read (default 4000)")
    max_candidates: int | None = Field(default=None, ge=0,
                                       description="strict: alternatives offered beside the value allowed (default 0)")

    @field_validator("file")
    @classmethod
    def _file_inside(cls, v: str | None) -> str | None:
        return None if v is None else _relative_path(v, "check file")

    @model_validator(mode="after")
    def _value_fits_kind(self) -> Check:
        if self.kind == "regex":
            try:
                re.compile(str(self.value))
            except re.error as exc:
                raise ValueError(f"regex does not compile: {exc}") from None
        if self.kind == "written" and self.file is None:
            raise ValueError("a 'written' check names the file or folder written in 'file'")
        if self.kind == "number":
            try:
                float(self.value)
            except ValueError:
                raise ValueError(f"a 'number' check needs a numeric value, got {self.value!r}") from None
        elif self.label is not None:
            raise ValueError("'label' names the quantity of a 'number' check; drop it from a "
                             f"{self.kind!r} check")
        return self

    def as_checker_dict(self) -> dict[str, Any]:
        """The dict ``check_answer.evaluate_check`` reads (options left at their defaults dropped)."""
        return self.model_dump(mode="json", exclude={k for k in CHECK_OPTIONS if getattr(self, k) is None})


# Added after schema 2's first cases were hashed: left out of the content hash at their
# defaults, so a case that does not use them keeps its hash (task ids are content-addressed).
CHECK_OPTIONS: dict[str, Any] = {"label": None, "match": "strict", "max_chars": None, "max_candidates": None}


class FileSpec(BaseModel):
    """A fixture staged into the workspace: ``src`` relative to the skill folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    src: str
    dest: str

    @field_validator("src", "dest")
    @classmethod
    def _relative(cls, v: str) -> str:
        return _relative_path(v, "path")


def _assertion_kind(v: Any) -> str:
    return "check" if isinstance(v, (dict, Check)) else "text"


# A plain string is a natural-language assertion (judged); a mapping is a deterministic Check.
Assertion = Annotated[
    Annotated[str, Tag("text")] | Annotated[Check, Tag("check")], Discriminator(_assertion_kind)
]


def _rename_spellings(data: dict[str, Any]) -> dict[str, Any]:
    for canonical, others in _SPELLINGS:
        for other in others:
            if other not in data:
                continue
            if canonical in data:
                raise ValueError(f"give either '{canonical}' or '{other}' (the same field), not both")
            data[canonical] = data.pop(other)
    return data


class EvalCase(BaseModel):
    """One evaluation case for a target skill.

    ``expected_skill`` None marks a negative control (the skill should not be used).
    ``required_credentials`` holds environment variable NAMES only; values are read
    from the host at run time (``resolve_credentials``) and never stored.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    prompt: str = Field(min_length=1)
    expected_output: str | None = None
    kind: CaseKind | None = None
    assertions: list[Assertion] = Field(default_factory=list)
    expected_skill: str | None
    expected_script: str | None = None
    acceptable_skills: list[str] = Field(default_factory=list)
    files: list[FileSpec] = Field(default_factory=list)
    expected_behavior: list[str] = Field(default_factory=list)
    required_credentials: list[CredentialName] = Field(default_factory=list)
    source: CaseSource = "author"
    note: str | None = None
    proposed: list[ProposedField] = Field(
        default_factory=list, description="fields whose value `dataset refine` proposed"
    )
    status: CaseStatus = Field(
        default="ready", description="'draft' until a person has reviewed a drafted case; studies refuse drafts"
    )
    judged_only: bool = Field(
        default=False, description="a draft with no check decidable without a judge (only an LLM judge can score it)"
    )

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = _rename_spellings(dict(data))
        if "id" in data and isinstance(data["id"], int) and not isinstance(data["id"], bool):
            data["id"] = str(data["id"])  # the reference implementation numbers its cases
        if isinstance(data.get("expected_behavior"), str):
            data["expected_behavior"] = [data["expected_behavior"]]
        files = data.get("files")
        if isinstance(files, list):
            data["files"] = [
                {"src": f, "dest": "data/" + PurePosixPath(f.replace("\\", "/")).name} if isinstance(f, str) else f
                for f in files
            ]
        return data

    @field_validator("id")
    @classmethod
    def _safe_id(cls, v: str) -> str:
        if not SAFE_CASE_ID.match(v):
            raise ValueError(
                "case id is not a safe identifier (letters, digits, '_', '-', '.'; at most 64)"
            )
        return v

    @field_validator("expected_skill")
    @classmethod
    def _safe_skill(cls, v: str | None) -> str | None:
        if v is not None and not SAFE_NAME.match(v):
            raise ValueError("skill name is not a safe identifier (letters, digits, '-', '_', '.')")
        return v

    @field_validator("acceptable_skills")
    @classmethod
    def _safe_skills(cls, v: list[str]) -> list[str]:
        for name in v:
            if not SAFE_NAME.match(name):
                raise ValueError(f"skill name {name!r} is not a safe identifier (letters, digits, '-', '_', '.')")
        return v

    @field_validator("expected_script")
    @classmethod
    def _script_inside(cls, v: str | None) -> str | None:
        return None if v is None else _relative_path(v, "expected_script")

    @field_validator("required_credentials")
    @classmethod
    def _credential_names(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("a credential is named twice")
        return v

    @model_validator(mode="after")
    def _distinct_destinations(self) -> EvalCase:
        seen: dict[str, str] = {}
        for f in self.files:
            if f.dest in seen:
                raise ValueError(
                    f"fixtures {seen[f.dest]!r} and {f.src!r} would both be staged at {f.dest!r}"
                )
            seen[f.dest] = f.src
        return self

    @property
    def is_negative_control(self) -> bool:
        return self.expected_skill is None

    @property
    def checks(self) -> list[Check]:
        return [a for a in self.assertions if isinstance(a, Check)]

    @property
    def is_generated(self) -> bool:
        """True for cases `dataset create` may replace (template or LLM output)."""
        return self.source in GENERATED_SOURCES

    def content_hash(self) -> str:
        """sha256 of the case's content; stable across the schema-2 additions at their defaults."""
        data = self.model_dump(mode="json")
        for name, default in _v2_defaults().items():
            if data[name] == default:
                del data[name]
        for a in data["assertions"]:
            if isinstance(a, dict):
                for name, default in CHECK_OPTIONS.items():
                    if a.get(name, default) == default:
                        a.pop(name, None)
        raw = json.dumps(data, sort_keys=True).encode()
        return hashlib.sha256(raw).hexdigest()


@cache
def _v2_defaults() -> dict[str, Any]:
    """The schema-2 fields' defaults, once: pydantic's ``get_default`` inspects the factory's
    signature on every call (a third of an unchanged re-emit's time went there)."""
    return {name: EvalCase.model_fields[name].get_default(call_default_factory=True) for name in _V2_FIELDS}


def migrate_suite(data: Any) -> Any:
    """Bring an unversioned or older suite payload to the current version (pure)."""
    if isinstance(data, list):
        data = {"evals": data}  # a bare array of cases (JSONL, or JSON written as a list)
    if not isinstance(data, dict):
        return data
    data = dict(data)
    version = data.get("schema_version")
    if version is None:
        version = "1"  # the reference implementation's files carry no version: same shape as v1
    version = str(version)
    if version not in READABLE_VERSIONS:
        raise ValueError(
            f"schema_version {version!r} is not one this aces-bench reads ({', '.join(READABLE_VERSIONS)})"
        )
    # v1 -> v2 only added optional fields; nothing to rewrite beyond the version.
    data["schema_version"] = EVALS_SCHEMA_VERSION
    return data


class EvalSuite(BaseModel):
    """A skill's evaluation cases, whatever file they came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["2"] = EVALS_SCHEMA_VERSION
    skill_name: str
    evals: list[EvalCase]
    notes: list[str] = Field(default_factory=list, description="EVAL.md notes carried for readers and generators")

    @model_validator(mode="before")
    @classmethod
    def _migrate_and_default_skill(cls, data: Any) -> Any:
        data = migrate_suite(data)
        # An absent expected_skill means "the suite's skill"; an explicit null marks
        # a negative control. The distinction only exists before validation.
        if isinstance(data, dict) and isinstance(data.get("evals"), list):
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


def canonical_case(case: EvalCase, skill_name: str) -> dict[str, Any]:
    """The written form of a case: reference names, defaults left out, skill only when not implied."""
    data = case.model_dump(mode="json", exclude_defaults=True)
    data["id"] = case.id
    data["prompt"] = case.prompt
    if case.expected_skill == skill_name:
        data.pop("expected_skill", None)  # absent means the suite's skill
    else:
        data["expected_skill"] = case.expected_skill  # null marks a negative control
    if case.files:
        data["files"] = [
            f.src if f.dest == "data/" + PurePosixPath(f.src).name else {"src": f.src, "dest": f.dest}
            for f in case.files
        ]
    return data


def canonical_suite(suite: EvalSuite) -> dict[str, Any]:
    """The one written form of a suite (see ``write_suite``)."""
    out: dict[str, Any] = {
        "schema_version": suite.schema_version,
        "skill_name": suite.skill_name,
        "evals": [canonical_case(c, suite.skill_name) for c in suite.evals],
    }
    if suite.notes:
        out["notes"] = list(suite.notes)
    return out
