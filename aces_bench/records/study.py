"""The study record, ``study.json``: which files make up a study, and whether they still belong together.

A study folder holds files written by different stages: the resolved spec
(``spec.json``), the emitted tasks' index, provenance, the grades, the trials table, the
report's statistics, the sequential ledger and its round files, the spend ledger, and at a
design's root ``design.json`` and its members. Each is its own versioned record with its
own reader; ``study.json`` says which of them make up the study: per part its file
(relative to the study folder), artifact and schema version, sha256, the stage that wrote
it and when.

- One writer, ``record_part``: each stage calls it right after writing its file; it is the
  only code that writes ``study.json`` (atomically).
- One reader, ``read_study``: the record validated, and every part (or the parts asked
  for) checked on disk: a regular file inside the study folder whose bytes still hash to
  what the stage recorded. A part that is missing or changed names the part, the file and
  the stage to re-run.
- A folder without ``study.json`` (every study written before it) reads as a version-0
  payload, the inventory of the files present (``inventory``), migrated to version 1 by
  ``from_folder``, the way ``aces_bench.core.versioning`` migrates every record.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aces_bench import __version__
from aces_bench.core.errors import ReportError
from aces_bench.core.io import write_json
from aces_bench.core.versioning import VersionedRecord, load_model
from aces_bench.records.trials import GRADES_FILE, TABLE_CSV, TABLE_PARQUET, GradedTrial, TrialRow

STUDY_FILE = "study.json"
SPEC_FILE = "spec.json"
RERUN = "re-run the study command on this folder (it resumes and records every part again)"
REPLACE = f"remove study.json and {RERUN}"
MAX_RECORD_BYTES = 16 * 1024 * 1024
_CHUNK = 1 << 20


@dataclass(frozen=True)
class PartKind:
    """Where a kind of part lies in a study folder (``{}``: the part's key, as in
    ``round:3`` or ``member:reference-group``), the stage that writes it and its artifact."""

    file: str
    stage: str
    artifact: str


# The artifact names are the writing classes' SCHEMA_ARTIFACT (tests/records/test_study_record.py
# holds them equal); records sit below those classes, so a folder's files are named here.
KINDS: dict[str, PartKind] = {
    "spec": PartKind(SPEC_FILE, "study", "resolved spec"),
    "plan": PartKind("tasks.json", "emit", "tasks index"),
    "reuse": PartKind("reuse.json", "run", "baseline reuse plan"),
    "provenance": PartKind("provenance.json", "study", "provenance"),
    "cost": PartKind("spend.jsonl", "run", "spend ledger"),
    "sequential": PartKind("sequential.json", "sequential", "sequential ledger"),
    "round": PartKind("sequential/round-{}.jsonl", "sequential", "grades"),
    "grades": PartKind(GRADES_FILE, "grade", "grades"),
    "trials": PartKind(TABLE_PARQUET, "grade", "trials table"),
    "trials_csv": PartKind(TABLE_CSV, "grade", "trials table"),
    "statistics": PartKind("report/summary.json", "report", "report summary"),
    "design": PartKind("design.json", "design", "study design"),
    "member": PartKind("{}/" + STUDY_FILE, "design", "study record"),
}
# At a design's root the trials table is every member's, written by the design.
DESIGN_TABLE_ARTIFACT = "study trials table"

# What re-writes a part, by the stage that wrote it.
STAGE_FIX = {
    "grade": "re-grade it: re-run the study command (it resumes and grades again), or `aces-bench grade "
             "<jobs dir> --out <this folder>` for a folder that command wrote",
    "report": "rebuild the report: re-run the study command (it resumes and rebuilds it)",
}


class Versioned(Protocol):
    """A record class: what its file is called in messages and the version it writes."""

    SCHEMA_ARTIFACT: ClassVar[str]
    SCHEMA_VERSION: ClassVar[str]


def _inside(file: str) -> str:
    """``file`` when it is a plain relative POSIX path: no absolute path, ``..``, ``.`` or
    empty component, backslash or NUL that could name anything outside the study folder."""
    if "\\" in file or "\0" in file or {".", "..", ""} & set(file.split("/")):
        raise ValueError(f"{file!r} is not a path inside the study folder")
    return file


class StudyPart(BaseModel):
    """One file of the study, as the stage that wrote it recorded it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="the part: spec, plan, reuse, provenance, cost, sequential, round:N, grades, "
                                  "trials, trials_csv, statistics, design, member:NAME")
    file: str = Field(description="its file, relative to the study folder (POSIX, never leaving it)")
    artifact: str
    schema_version: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    stage: str
    written_at: str | None = Field(description="when the stage recorded it; None: read from a folder written "
                                               "before study.json")

    @field_validator("file")
    @classmethod
    def _inside_the_folder(cls, file: str) -> str:
        return _inside(file)

    def fix(self) -> str:
        return STAGE_FIX.get(self.stage, RERUN)


def from_folder(data: dict[str, Any]) -> dict[str, Any]:
    """Migration 0 -> 1: a folder's inventory (``inventory``) as the record of its parts."""
    files = {f["file"]: f for f in data.get("files", [])}
    designed = KINDS["design"].file in files
    parts = []
    for rel, found in files.items():
        name = part_name(rel)
        kind = KINDS[name.split(":")[0]]
        artifact, stage = kind.artifact, kind.stage
        if designed and name in ("trials", "trials_csv"):
            artifact, stage = DESIGN_TABLE_ARTIFACT, "design"
        parts.append({"name": name, "file": rel, "artifact": artifact,
                      "schema_version": found.get("schema_version") or "1", "sha256": found["sha256"],
                      "stage": stage, "written_at": None})
    return {"schema_version": "1", "study": data["study"], "created_at": data.get("created_at"),
            "aces_bench_version": data.get("aces_bench_version"), "parts": parts}


class StudyRecord(VersionedRecord):
    """``study.json``: what the study is and the files it is made of."""

    model_config = ConfigDict(extra="forbid")
    SCHEMA_ARTIFACT: ClassVar[str] = "study record"
    SCHEMA_VERSION: ClassVar[str] = "1"
    SCHEMA_REGENERATE: ClassVar[str] = RERUN
    SCHEMA_MIGRATIONS: ClassVar[dict] = {"0": from_folder}

    study: str = Field(description="the study's output folder name (the trials table's run_id)")
    created_at: str | None = Field(description="when the study's first part was recorded (an older folder: "
                                               "its provenance's created_at)")
    aces_bench_version: str | None = Field(description="the aces-bench that created the record (an older "
                                                       "folder: the one its provenance names)")
    parts: list[StudyPart]

    def part(self, name: str) -> StudyPart | None:
        return next((p for p in self.parts if p.name == name), None)


def part_name(file: str) -> str:
    """The part a known file is (``sequential/round-3.jsonl`` -> ``round:3``); KeyError otherwise."""
    for name, kind in KINDS.items():
        head, _, tail = kind.file.partition("{}")
        if not tail and file == head:
            return name
        if tail and file.startswith(head) and file.endswith(tail) and len(file) > len(head) + len(tail):
            key = file[len(head):len(file) - len(tail)]
            if "/" not in key:
                return f"{name}:{key}"
    raise KeyError(file)


# --- files on disk -------------------------------------------------------------------------


def _refuse(root: Path, name: str, file: str, problem: str, fix: str) -> ReportError:
    return ReportError(f"part {name!r} ({file}) {problem}", where=root / STUDY_FILE, fix=fix)


def _open_regular(root: Path, file: str) -> int:
    """A descriptor on ``root/file`` when it is a regular file inside ``root``: no link is
    followed out of the folder, the last component is never a link, and a FIFO or device is
    refused without blocking on it. OSError or ValueError (the problem in words) otherwise."""
    path = root / file
    if not path.parent.resolve().is_relative_to(root.resolve()):
        raise ValueError("lies outside the study folder (through a symbolic link)")
    if path.is_symlink():
        raise ValueError("is a symbolic link, not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else "not a file"
        raise ValueError(f"is {kind}, not a regular file")
    return fd


def file_sha256(root: Path, file: str) -> str:
    """The sha256 of ``root/file``, read as ``_open_regular`` allows."""
    digest = hashlib.sha256()
    with os.fdopen(_open_regular(root, file), "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _check(root: Path, part: StudyPart) -> None:
    fix = part.fix()
    try:
        now = file_sha256(root, part.file)
    except FileNotFoundError:
        raise _refuse(root, part.name, part.file, f"is missing (the {part.stage} stage wrote it)", fix) from None
    except ValueError as exc:
        raise _refuse(root, part.name, part.file, str(exc), f"remove it and {fix}") from None
    except OSError as exc:
        raise _refuse(root, part.name, part.file, f"cannot be read: {exc.strerror}", fix) from None
    if now != part.sha256:
        raise _refuse(root, part.name, part.file,
                      f"has changed since the {part.stage} stage recorded it (sha256 {part.sha256[:12]}… "
                      f"recorded, {now[:12]}… now): it no longer belongs to this study", fix)


def _declared_version(root: Path, file: str) -> str | None:
    """The schema_version a file states (JSON: its own or its first entry's; JSON lines:
    the first line's; a table: its first row's), None when it states none."""
    path = root / file
    try:
        if file.endswith(".parquet"):
            import pyarrow.parquet as pq

            column = pq.read_table(path, columns=["schema_version"]).column(0)
            value = column[0].as_py() if len(column) else None
        elif file.endswith(".csv"):
            import pandas as pd

            frame = pd.read_csv(path, usecols=["schema_version"], nrows=1, dtype=str)
            value = frame["schema_version"].iloc[0] if len(frame) else None
        else:
            if file.endswith(".jsonl"):
                with open(path, encoding="utf-8") as fh:
                    entry = json.loads(next((line for line in fh if line.strip()), "null"))
            else:
                entry = json.loads(path.read_text(encoding="utf-8"))
            entry = entry[0] if isinstance(entry, list) and entry else entry
            value = entry.get("schema_version") if isinstance(entry, dict) else None
    except (OSError, ValueError, KeyError, IndexError, ImportError):
        return None  # the part's own reader says what is wrong with the file
    return None if value is None else str(value)


def _known_files(root: Path) -> list[str]:
    """The files of a folder written before study.json that are parts of a study, named as
    their writers name them (never found by globbing whatever the folder holds)."""
    found = [kind.file for kind in KINDS.values() if "{}" not in kind.file]
    rounds = root / "sequential"
    if rounds.is_dir() and not rounds.is_symlink():
        found += [f"sequential/{p.name}" for p in sorted(rounds.iterdir()) if _is_round(p.name)]
    return [f for f in found if os.path.lexists(root / f)]


def _is_round(name: str) -> bool:
    try:
        return part_name(f"sequential/{name}").startswith("round:")
    except KeyError:
        return False


def _provenance_facts(root: Path) -> tuple[str | None, str | None]:
    """When the study was made and by which aces-bench, as its provenance says; None for
    what it does not say plainly (a bad provenance is its own reader's to refuse, naming it)."""
    try:
        data = json.loads((root / KINDS["provenance"].file).read_text(encoding="utf-8"))
        created, version = data.get("created_at"), (data.get("versions") or {}).get("aces-bench")
    except (OSError, ValueError, AttributeError):
        return None, None
    return (created if isinstance(created, str) else None), (version if isinstance(version, str) else None)


def inventory(root: Path) -> dict[str, Any]:
    """A folder without ``study.json`` as a version-0 payload: the known files present, each
    hashed (read as ``read_study`` reads parts: a link or FIFO is refused naming it)."""
    root = Path(root)
    files = []
    for rel in _known_files(root):
        name = part_name(rel)
        try:
            sha = file_sha256(root, rel)
        except ValueError as exc:
            raise _refuse(root, name, rel, str(exc), f"remove it and {RERUN}") from None
        except OSError as exc:
            raise _refuse(root, name, rel, f"cannot be read: {exc.strerror}", RERUN) from None
        files.append({"file": rel, "sha256": sha, "schema_version": _declared_version(root, rel)})
    created_at, version = _provenance_facts(root)
    return {"schema_version": "0", "study": root.resolve().name, "created_at": created_at,
            "aces_bench_version": version, "files": files}


def _stored(root: Path) -> StudyRecord | None:
    """The record in ``root/study.json`` as stored (parts not checked), None when there is none."""
    where = root / STUDY_FILE
    if not os.path.lexists(where):
        return None
    try:
        with os.fdopen(_open_regular(root, STUDY_FILE), "rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)
    except ValueError as exc:
        raise ReportError(f"the study record {exc}", where=where, fix=REPLACE) from None
    except OSError as exc:
        raise ReportError(f"cannot read the study record: {exc.strerror}", where=where, fix=RERUN) from None
    if len(data) > MAX_RECORD_BYTES:
        raise ReportError(f"the study record is larger than {MAX_RECORD_BYTES // 2**20} MiB", where=where,
                          fix=REPLACE)
    try:
        payload = json.loads(data)
    except ValueError as exc:
        detail = f"{exc.msg} (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) \
            else str(exc)
        raise ReportError(f"the study record is not JSON (cut short or damaged): {detail}", where=where,
                          fix=REPLACE) from None
    return load_model(StudyRecord, payload, where=where, fix=REPLACE)


def current(root: Path) -> StudyRecord:
    """The study's record as it stands: ``study.json``, else the folder's files migrated."""
    root = Path(root)
    stored = _stored(root)
    if stored is not None:
        return stored
    return load_model(StudyRecord, inventory(root), where=root, fix=RERUN)


def read_study(path: str | Path, kinds: Iterable[str] | None = None) -> StudyRecord:
    """The record of the study at ``path`` (its folder or its ``study.json``), with every
    part checked on disk, or only the parts of ``kinds`` (``trials``, ``member``...). A
    folder written before ``study.json`` is migrated from its files; nothing is written."""
    path = Path(path)
    root = path.parent if path.name == STUDY_FILE else path
    if not root.is_dir():
        raise ReportError("no such study folder", where=root, fix="point at a study output dir (outputs/<study>)")
    record = current(root)
    wanted = None if kinds is None else set(kinds)
    for part in record.parts:
        if wanted is None or part.name.split(":")[0] in wanted:
            _check(root, part)
    return record


def part_path(root: Path, record: StudyRecord, name: str) -> Path | None:
    """Where part ``name`` of ``record`` lies, None when the study has no such part."""
    part = record.part(name)
    return None if part is None else Path(root) / part.file


def record_part(root: str | Path, name: str, model: type[Versioned], *, stage: str) -> StudyRecord:
    """Record (or re-record) part ``name`` of the study at ``root``: the file its stage has
    just written (where its kind lies, ``KINDS``), hashed now, as the record ``model`` holds.
    The one writer of ``study.json``; a folder without one starts from its files."""
    root = Path(root)
    kind, _, key = name.partition(":")
    rel = KINDS[kind].file.format(key)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    part = StudyPart(name=name, file=rel, artifact=model.SCHEMA_ARTIFACT, schema_version=str(model.SCHEMA_VERSION),
                     sha256=file_sha256(root, rel), stage=stage, written_at=now)
    before = _stored(root)
    if before is None:  # the study's first part, or a folder written before study.json
        before = current(root)
        before = before.model_copy(update={"created_at": before.created_at or now,
                                           "aces_bench_version": before.aces_bench_version or __version__})
    parts = [p for p in before.parts if p.name != name] + [part]
    updated = before.model_copy(update={"parts": parts})
    write_json(root / STUDY_FILE, updated)
    return updated


def record_graded(root: str | Path) -> None:
    """Record the grades and the trials table (Parquet and CSV) grading has just written."""
    record_part(root, "grades", GradedTrial, stage="grade")
    record_part(root, "trials", TrialRow, stage="grade")
    record_part(root, "trials_csv", TrialRow, stage="grade")


class ResolvedSpec(VersionedRecord):
    """``spec.json``: the composed spec the study ran (its RunSpec dumped to JSON, secrets masked)."""

    model_config = ConfigDict(extra="forbid")
    SCHEMA_ARTIFACT: ClassVar[str] = "resolved spec"
    SCHEMA_VERSION: ClassVar[str] = "1"
    SCHEMA_REGENERATE: ClassVar[str] = RERUN

    spec: dict[str, Any]


def write_spec(root: str | Path, spec: dict[str, Any]) -> StudyRecord:
    """Write ``spec.json`` (``spec``: the RunSpec's JSON, masked by the caller) and record it."""
    write_json(Path(root) / SPEC_FILE, ResolvedSpec(spec=spec))
    return record_part(root, "spec", ResolvedSpec, stage="study")
