"""Read retained workspace artifacts as text, for graders that scan them.

This is the one place graders touch the artifact folder: metrics receive the
``ArtifactText`` records, never a path. Binary files and symlinks are skipped
(a symlink could point at host files), large files are read up to a cap, and
every skip is reported so a grader can say what it did not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aces_bench.inputs.skilltree import FILE, LOOP, walk
from aces_bench.inputs.trialfiles import read_trial_file

MAX_FILE_BYTES = 2_000_000
MAX_FILES = 5_000


@dataclass(frozen=True, slots=True)
class ArtifactText:
    path: str  # relative to the artifacts folder, POSIX
    text: str
    truncated: bool = False


def read_artifact_texts(
    artifacts_dir: Path | None, *, max_file_bytes: int = MAX_FILE_BYTES, max_files: int = MAX_FILES
) -> tuple[list[ArtifactText], list[str]]:
    """Text files under ``artifacts_dir`` and notes on what was skipped.

    Returns ``([], [])`` when there is no folder: no artifacts is not an error.
    """
    if artifacts_dir is None:
        return [], []
    root = Path(artifacts_dir)
    if not root.is_dir():
        return [], [f"artifacts folder {root} does not exist"]
    texts: list[ArtifactText] = []
    notes: list[str] = []
    # The one walk: links are never followed (whatever they point at), pipes never opened.
    for entry in walk(root, skip=lambda name, is_dir: False):
        rel = entry.rel
        if entry.kind != FILE or entry.via_link:
            what = "symlink not followed" if entry.target is not None or entry.kind == LOOP else entry.describe()
            notes.append(f"{rel}: {what}")
            continue
        if len(texts) >= max_files:
            notes.append(f"more than {max_files} files: the rest were not scanned")
            break
        read = read_trial_file(entry.path, limit=max_file_bytes)
        if not read.ok:
            notes.append(f"{rel}: {read.problem}")
            continue
        data = read.data
        if b"\0" in data[:8192]:
            notes.append(f"{rel}: binary, not scanned")
            continue
        if read.truncated:
            notes.append(f"{rel}: only the first {max_file_bytes:,} bytes scanned")
        texts.append(ArtifactText(rel, data.decode("utf-8", errors="replace"), read.truncated))
    return texts, notes
