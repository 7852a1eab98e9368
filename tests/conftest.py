"""Shared test fixtures: paths to the project's own fixture skills and ../shared."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from aces_bench.emitters.accepted import CACHE_ENV
from aces_bench.reports.render_cache import CACHE_ENV as FIGURE_CACHE_ENV
from aces_bench.reports.render_cache import OFF as FIGURE_CACHE_OFF
from aces_bench.run.reuse import STORE_ENV

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared"

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# litellm points tiktoken at its bundled encodings (TIKTOKEN_CACHE_DIR) when first imported.
# Imported inside a mock.patch.dict(os.environ) (the known-effect terminus runs), the variable
# is dropped on exit, and a later terminus-2 trial in the same process tries to download
# o200k_base (no network): with pytest-xdist that order happens. Import it once, here.
import litellm.litellm_core_utils.default_encoding  # noqa: E402, F401


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``sandbox`` runs real work in bubblewrap: without it, it skips and says why."""
    if item.get_closest_marker("sandbox") is not None and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed; the local sandbox needs it (`make sandbox`)")


@pytest.fixture
def fixture_skills() -> Path:
    return FIXTURES / "skills"


@pytest.fixture
def fixture_decoys() -> Path:
    return FIXTURES / "decoys"


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"../shared is absent ({SHARED}): this test needs the shared data")
    return SHARED


@pytest.fixture(autouse=True, scope="session")
def _emit_record(tmp_path_factory):
    """Task ids Harbor accepted during the tests are recorded in a folder of the
    session's own, not in the working directory's .aces-cache (each session starts
    with none, as a fresh machine would)."""
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("emit-cache"))


@pytest.fixture(autouse=True, scope="session")
def _figure_cache(tmp_path_factory):
    """Rendered figures and a rebuild's remembered statistics (``reports.render_cache``) go
    to a folder of the session's own, never the user's ~/.cache, which the tests would
    otherwise fill with an entry per report they build."""
    if os.environ.get(FIGURE_CACHE_ENV) != FIGURE_CACHE_OFF:
        os.environ[FIGURE_CACHE_ENV] = str(tmp_path_factory.mktemp("figure-cache"))


@pytest.fixture(autouse=True, scope="module")
def _module_baseline_store(tmp_path_factory):
    """A module-scoped fixture (a study run once for a module's tests) is set up before
    any function-scoped one, so ``_baseline_store`` below comes too late for it: each
    module gets an empty store of its own first. Without it such a study read the
    user's ~/.cache store and reused baseline trials of an earlier session, so what a
    test saw depended on what had run before it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(STORE_ENV, str(tmp_path_factory.mktemp("module-baseline-store")))
        yield


@pytest.fixture(autouse=True)
def _baseline_store(tmp_path_factory, monkeypatch):
    """Each test gets an empty baseline-reuse store of its own (never the user's
    ~/.cache): a study in one test cannot reuse another test's baseline trials."""
    monkeypatch.setenv(STORE_ENV, str(tmp_path_factory.mktemp("baseline-store")))
