"""The labelled security corpus of the static scan (tests/static/data/security_corpus.yaml)."""

from __future__ import annotations

from pathlib import Path

import yaml

CORPUS = yaml.safe_load((Path(__file__).resolve().parents[1] / "static" / "data" / "security_corpus.yaml")
                        .read_text(encoding="utf-8"))
