"""aces-bench: paired with/without-skill evaluation of agent skills on Harbor."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__version__ = "0.1.0"


def load(path: str | Path) -> pd.DataFrame:
    """A study's trials as one DataFrame: every member's rows with ``member``, ``arm``
    and ``arms`` (``docs/data.md`` lists every column).

    ``path``: a study output folder (``outputs/<study>``), a multirun folder, a designed
    study (``study=aces_paper``) or one ``trials.parquet``/``trials.csv``. A study's
    members and tables are found through its ``study.json`` (``records/study.py``), each
    checked against the hash its stage recorded. The headline's rows are ``arm == "primary"``.
    """
    # Imported by name when called: the package root sits below every layer (agents,
    # backends and judges import it for __version__), so it must not import the records.
    study_data = importlib.import_module("aces_bench.records.study_data")
    return study_data.study_trials(Path(path))


__all__ = ["__version__", "load"]
