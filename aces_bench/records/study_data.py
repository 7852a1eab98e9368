"""A study's trials as one table: what ``aces_bench.load(path)`` returns.

A results folder is one study (its own ``trials.parquet``), a multirun sweep (member
folders, each with its table) or a designed study (``design.json`` and a folder per
member). A study's files are found through its record (``study.json``, ``records.study``:
its ``design``, ``member`` and ``trials`` parts, each checked against the hash its stage
recorded; a folder written before the record is migrated from its files); only a sweep's
folder, which is no study of its own, is searched for member tables. Whatever it is, its
trials come back as one DataFrame with every member's rows and three more columns
(``docs/data.md``):

- ``member``: the member folder the trial ran in (the study's own folder name for a
  single study);
- ``arm``: the design arm the trial counts in, the first arm listing its member
  (``primary`` for a study that is not a design: it is one arm);
- ``arms``: every arm listing the member, ``;``-separated in design order (a member can
  serve two arms: the model slice's default-model cell is a primary cell).

The study's headline is computed on ``arm == "primary"`` (``PRIMARY_ARM``); every other
arm is reported apart. A design writes this table once more at its root
(``write_study_table``: ``trials.parquet`` and ``trials.csv``), so ``pd.read_parquet``
on that one file gives the same frame.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from aces_bench.core.errors import ReportError
from aces_bench.records.study import KINDS, part_path, read_study
from aces_bench.records.trials import (
    PRIMARY_ARM,
    STUDY_COLUMNS,
    TABLE_CSV,
    TABLE_PARQUET,
    read_table_file,
    study_table_columns,
    write_table_csv,
)

DESIGN_FILE = KINDS["design"].file
ARMS_SEPARATOR = ";"


class _DesignMember(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    arms: list[str]


class _DesignFile(BaseModel):
    """The part of ``design.json`` (``aces_bench.study.design.DesignSize``) that places members in arms."""

    model_config = ConfigDict(extra="ignore")

    members: list[_DesignMember]
    paper_page: bool = False


def design_paper_page(path: Path) -> bool:
    """Whether the study behind ``design.json`` asked for the paper page (``study.paper_page``)."""
    try:
        return _DesignFile.model_validate(json.loads(Path(path).read_text(encoding="utf-8"))).paper_page
    except (OSError, ValueError, ValidationError):
        return False  # read_design, which every report calls, says what is wrong with it


@dataclass(frozen=True)
class MemberDir:
    """One folder of trials in a study, and the arms it serves."""

    name: str
    path: Path
    arms: tuple[str, ...]
    table: Path

    @property
    def arm(self) -> str:
        return self.arms[0]


def _unique(values) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def read_design(path: Path) -> list[_DesignMember]:
    """The members of a ``design.json``, in design order; a bad file is a ReportError."""
    try:
        return _DesignFile.model_validate(json.loads(Path(path).read_text(encoding="utf-8"))).members
    except (OSError, ValueError, ValidationError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) else str(exc).splitlines()[0]
        raise ReportError(f"cannot read the study design: {detail}", where=path,
                          fix="re-run the study command (it resumes and rewrites design.json)") from None


def _member_table(folder: Path) -> Path | None:
    """A study folder's trials table, as its record names it (None: the member has not run)."""
    if not folder.is_dir():
        return None
    return part_path(folder, read_study(folder, kinds=("trials",)), "trials")


def member_dirs(path: Path) -> list[MemberDir]:
    """The folders holding a study's trials, in design order (or by name for a sweep)."""
    path = Path(path)
    record = read_study(path, kinds=("design", "member", "trials"))
    design = part_path(path, record, "design")
    if design is not None:
        found = [MemberDir(m.name, path / m.name, _unique(m.arms) or (PRIMARY_ARM,), table)
                 for m in read_design(design) if (table := _member_table(path / m.name)) is not None]
        if not found:
            raise ReportError(f"no member of the design has a {TABLE_PARQUET} (was it run with emit_only=true?)",
                              where=path, fix="run the study (the same command without emit_only=true)")
        return found
    table = part_path(path, record, "trials")
    if table is not None:
        return [MemberDir(path.resolve().name, path, (PRIMARY_ARM,), table)]
    # A multirun folder is no study: its members are the subfolders holding a study's table.
    subs = sorted(p.parent for p in path.glob(f"*/{TABLE_PARQUET}"))
    if not subs:
        raise ReportError(f"no {TABLE_PARQUET} here or in its subfolders", where=path,
                          fix="point at a study output dir (outputs/<study>) or a multirun dir (multirun/<study>)")
    return [MemberDir(p.name, p, (PRIMARY_ARM,), table) for p in subs
            if (table := _member_table(p)) is not None]


def _placed(frame: pd.DataFrame, member: MemberDir) -> pd.DataFrame:
    return frame.assign(member=member.name, arm=member.arm, arms=ARMS_SEPARATOR.join(member.arms))


def study_trials(path: Path) -> pd.DataFrame:
    """Every trial of the study at ``path`` with ``member``, ``arm`` and ``arms``.

    ``path``: a study, sweep or design folder, or one table file (``.parquet`` or
    ``.csv``; a member's table gets its member and arm from its own folder). Rows are
    validated against the trials-table schema (``aces_bench.records.trials``); a bad row, an
    unreadable file or a folder without trials is a ReportError naming it.
    """
    path = Path(path)
    if path.is_file():
        frame = read_table_file(path)
        if "member" in frame.columns:
            return frame
        return _placed(frame, MemberDir(path.parent.resolve().name, path.parent, (PRIMARY_ARM,), path))[
            list(study_table_columns())]
    if not path.is_dir():
        raise ReportError("no such study folder or table file", where=path,
                          fix="point at a study output dir (outputs/<study>), a multirun dir or a trials.parquet")
    frames = []
    for member in member_dirs(path):
        frame = read_table_file(member.table)
        frames.append(_placed(frame.drop(columns=[c for c in STUDY_COLUMNS if c in frame.columns]), member))
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return frame[list(study_table_columns())]


def write_study_table(path: Path) -> tuple[Path, Path]:
    """Write the study-level ``trials.parquet`` and ``trials.csv`` at a design's root."""
    from aces_bench.core.io import write_frame

    path = Path(path)
    frame = study_trials(path)
    return write_frame(path / TABLE_PARQUET, frame), write_table_csv(path / TABLE_CSV, frame)
