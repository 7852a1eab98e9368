"""The one security pattern schema shared by the security metric and the static scan."""

from __future__ import annotations

from pathlib import Path

import pytest

from aces_bench.core.errors import ConfigError
from aces_bench.graders.patterns import DEFAULT_PATTERNS_FILE, load_patterns
from aces_bench.inputs.security_patterns import TRAJECTORY_SCOPES, read_pattern_file
from aces_bench.static.security import PATTERNS_FILE
from aces_bench.static.security import load_patterns as load_static

WEIGHTS = "severity_weights: {critical: 1, high: 0.5, medium: 0.25, low: 0.1}\n"


def test_both_shipped_files_validate_through_the_one_loader():
    graders = read_pattern_file(DEFAULT_PATTERNS_FILE, scopes=TRAJECTORY_SCOPES, weights=True)
    static = read_pattern_file(PATTERNS_FILE, scopes=("skill_file",))
    assert type(graders) is type(static)
    assert {p.kind for p in static.patterns} >= {"regex", "unicode", "file"}
    assert all(s in TRAJECTORY_SCOPES for p in graders.patterns for s in p.scopes)


def test_scope_of_the_other_set_is_refused(tmp_path: Path):
    bad = tmp_path / "p.yaml"
    bad.write_text(WEIGHTS + "patterns:\n  - {id: S900, category: c, severity: high, scopes: [skill_file], "
                   "description: d, regex: 'x'}\n")
    with pytest.raises(ConfigError) as exc:
        load_patterns(bad)
    msg = str(exc.value)
    assert str(bad) in msg and "pattern 'S900' has scope(s) ['skill_file']" in msg and "use scopes from: command" in msg


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ("{id: S901, category: c, severity: high, scopes: [skill_file], description: d, kind: unicode}",
         "kind unicode needs 'ranges'"),
        ("{id: S902, category: c, severity: high, scopes: [skill_file], description: d, regex: 'x', prefilter: [X]}",
         "prefilter literals must be non-empty and lowercase"),
        ("{id: S903, category: c, severity: high, scopes: [skill_file], description: d, regex: 'x', unless: S999}",
         "unless names unknown pattern 'S999'"),
        ("{id: S904, category: c, severity: severe, scopes: [skill_file], description: d, regex: 'x'}",
         "patterns[0].severity: Input should be"),
    ],
)
def test_static_file_errors_name_the_key(tmp_path: Path, entry: str, needle: str):
    bad = tmp_path / "p.yaml"
    bad.write_text(f"patterns:\n  - {entry}\n")
    with pytest.raises(ConfigError) as exc:
        load_static(bad)
    assert needle in str(exc.value) and str(bad) in str(exc.value)


def test_security_metric_file_needs_weights(tmp_path: Path):
    bad = tmp_path / "p.yaml"
    bad.write_text("patterns:\n  - {id: x.y, category: c, severity: high, scopes: [command], description: d, regex: 'x'}\n")
    with pytest.raises(ConfigError, match="severity_weights is missing"):
        load_patterns(bad)
