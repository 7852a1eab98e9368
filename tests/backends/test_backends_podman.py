"""backend=podman: Harbor's own podman environment runs a paired study.

Real podman (runc, the containers.conf aces-bench writes), podman-compose from PyPI,
and the python:3.12-slim image built offline by ``aces-bench podman image``. The
reference agent keeps the model out of it; the verifier and the graders run as on
any backend.
"""

from __future__ import annotations

import pytest
from support.studies import read_table, study_overrides

from aces_bench.backends import podman
from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import BackendError
from aces_bench.study.entry import run_study

_missing = podman.missing_tools()
needs_podman = pytest.mark.skipif(
    bool(_missing) or not podman.image_present(),
    reason=("backend=podman needs " + "; ".join(_missing)) if _missing
    else f"{podman.IMAGE} is not built: run `aces-bench podman image` (make podman-image)",
)


@needs_podman
def test_paired_study_on_podman(tmp_path):
    # Harbor's podman environment cannot enforce no-network (it refuses the trial).
    overrides = [o for o in study_overrides(root_parent=tmp_path) if "root_parent" not in o]
    spec = compose_spec(["backend=podman", "workspace.network=public", *overrides], output_dir=tmp_path / "out")
    run_study(spec)
    table = read_table(tmp_path / "out").set_index("condition")
    assert (table["status"] == "ok").all(), table[["status", "failure_cause"]].to_dict()
    assert (table["backend"] == "podman (Harbor)").all()
    skill, base = table.loc["with_skill"], table.loc["baseline"]
    assert skill["reward"] == 1.0 and base["reward"] == 0.0
    # Harbor downloads /logs/artifacts from an unmounted environment before the verifier
    # copies the workspace there, so the rewards (computed inside the container) are
    # what this backend gives the host; the trajectory is there too.
    assert skill["has_trajectory"] and base["has_trajectory"]


def test_missing_podman_is_named(monkeypatch):
    monkeypatch.setattr(podman.shutil, "which", lambda name, path=None: None)
    with pytest.raises(BackendError) as err:
        podman.preflight()
    message = str(err.value)
    assert "backend=podman needs podman (apt-get install podman); runc (apt-get install runc); podman-compose" in message


def test_debootstrap_mirror_comes_from_the_hosts_apt_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("ACES_DEBIAN_MIRROR", raising=False)
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "other.sources").write_text(
        "Types: deb\nURIs: http://vendor.test/apt\nSuites: nodistro\nComponents: main\n"
    )
    (d / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://mirror.test/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n\nTypes: deb\nURIs: http://mirror.test/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n"
    )
    assert podman.debian_mirror((d, tmp_path / "sources.list")) == "http://mirror.test/debian"

    one_line = tmp_path / "one.list"
    one_line.write_text("# deb http://commented.test bookworm main\n"
                        "deb [arch=amd64] http://legacy.test/debian bookworm main\n")
    assert podman.debian_mirror((one_line,)) == "http://legacy.test/debian"

    monkeypatch.setenv("ACES_DEBIAN_MIRROR", "http://override.test/debian")
    assert podman.debian_mirror((one_line,)) == "http://override.test/debian"


def test_no_debian_source_is_an_error_naming_the_fix(tmp_path, monkeypatch):
    monkeypatch.delenv("ACES_DEBIAN_MIRROR", raising=False)
    (tmp_path / "x.list").write_text("deb http://vendor.test/apt nodistro main\n")
    with pytest.raises(BackendError) as err:
        podman.debian_mirror((tmp_path,))
    assert "ACES_DEBIAN_MIRROR" in str(err.value)
