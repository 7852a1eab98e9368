"""Backend and Hydra-launcher options resolve to the Harbor and launcher settings they
promise, without launching anything."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest
from harbor.environments.factory import _ENVIRONMENT_REGISTRY
from harbor.models.environment_type import EnvironmentType
from hydra import compose, initialize_config_module
from hydra.utils import instantiate
from omegaconf import OmegaConf

from aces_bench.config.compose import compose_spec
from aces_bench.config.store import CONFIG_MODULE, CONFIG_NAME, register
from aces_bench.core.errors import ConfigError
from aces_bench.emitters import emit_study
from aces_bench.run.runner import environment_config, job_config

CONF = Path(__file__).resolve().parents[2] / "conf"
SKILLS = ["skill=custom", "skill.paths=[tests/fixtures/skills]"]
GKE = ["backend.kwargs.cluster_name=aces", "backend.kwargs.region=europe-west4", "backend.kwargs.registry_name=aces"]
# Arguments every Harbor environment receives from Harbor itself.
_HARBOR_ARGS = {"self", "environment_dir", "environment_name", "session_id", "trial_paths", "task_env_config"}


def _backend_options():
    return sorted(p.stem for p in (CONF / "backend").glob("*.yaml"))


def _required_kwargs(env_type: str) -> set[str]:
    entry = _ENVIRONMENT_REGISTRY[EnvironmentType(env_type)]
    cls = getattr(importlib.import_module(entry.module), entry.class_name)
    return {
        name for name, p in inspect.signature(cls.__init__).parameters.items()
        if name not in _HARBOR_ARGS and p.default is inspect.Parameter.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


@pytest.mark.parametrize("option", _backend_options())
def test_backend_resolves_to_a_complete_harbor_environment(option, tmp_path):
    spec = compose_spec([*SKILLS, f"backend={option}", *(GKE if option == "gke" else [])], output_dir=tmp_path)
    env = environment_config(spec)
    if spec.backend.type is not None:
        assert env.type == EnvironmentType(spec.backend.type) and env.import_path is None
        # Harbor's class would refuse to start without these: the config must carry them.
        missing = _required_kwargs(spec.backend.type) - set(env.kwargs)
        assert not missing, f"backend={option} lacks {sorted(missing)} for Harbor's {spec.backend.type} environment"
    else:
        assert env.type is None and env.import_path == "aces_bench.backends.local:LocalSandboxEnvironment"
    emitted = emit_study(spec, tmp_path / "tasks")
    job = job_config(spec, emitted, tmp_path / "jobs")
    assert job.environment == env
    assert job.datasets[0].path == emitted.tasks_dir
    assert job.n_attempts == spec.study.n_attempts and job.n_concurrent_trials == spec.study.n_concurrent


def test_gke_settings_resolve_and_registry_follows_the_region(tmp_path):
    spec = compose_spec([*SKILLS, "backend=gke", *GKE], output_dir=tmp_path)
    assert environment_config(spec).kwargs == {
        "cluster_name": "aces", "region": "europe-west4", "namespace": "default",
        "registry_location": "europe-west4", "registry_name": "aces",
    }


def test_gke_without_its_cluster_is_refused_at_compose_time(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec([*SKILLS, "backend=gke"], output_dir=tmp_path)
    assert "backend.kwargs.cluster_name" in str(err.value)


def _launcher(name: str, *extra: str):
    register()
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        cfg = compose(config_name=CONFIG_NAME, overrides=[f"hydra/launcher={name}", "study=routing_stress", *extra],
                      return_hydra_config=True)
    return cfg


def test_joblib_launcher_runs_two_sweep_members_at_once():
    cfg = _launcher("local_parallel")
    launcher = OmegaConf.to_container(cfg.hydra.launcher, resolve=False)
    assert launcher["_target_"] == "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"
    assert launcher["n_jobs"] == 2 and launcher["prefer"] == "processes"
    assert type(instantiate(cfg.hydra.launcher, _recursive_=False)).__name__ == "JoblibLauncher"


def test_slurm_launcher_settings_and_overrides():
    cfg = _launcher("slurm", "hydra.launcher.partition=cpu", "hydra.launcher.account=lab")
    launcher = OmegaConf.to_container(cfg.hydra.launcher, resolve=False)
    assert launcher["_target_"] == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert (launcher["partition"], launcher["account"], launcher["cpus_per_task"], launcher["mem_gb"]) == ("cpu", "lab", 4, 8)
    assert launcher["timeout_min"] == 240 and launcher["nodes"] == 1
    assert "export HARBOR_TELEMETRY=0" in launcher["setup"]
    assert launcher["submitit_folder"] == "${hydra.sweep.dir}/.submitit/%j"
    assert type(instantiate(cfg.hydra.launcher, _recursive_=False)).__name__ == "SlurmLauncher"


def test_submitit_local_launcher():
    cfg = _launcher("slurm_local")
    assert cfg.hydra.launcher._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"
    assert type(instantiate(cfg.hydra.launcher, _recursive_=False)).__name__ == "LocalLauncher"


def test_ray_launcher_joins_a_cluster_by_address():
    pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="optional extra: pip install hydra-ray-launcher")
    cfg = _launcher("ray_cluster", "hydra.launcher.ray.init.address=auto")
    launcher = OmegaConf.to_container(cfg.hydra.launcher, resolve=False)
    assert launcher["_target_"] == "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher"
    assert launcher["ray"]["init"]["address"] == "auto"
    assert launcher["ray"]["remote"] == {"num_cpus": 2, "max_calls": 1}
    assert type(instantiate(cfg.hydra.launcher, _recursive_=False)).__name__ == "RayLauncher"


def test_routing_stress_sweeps_every_decoy_size_by_default():
    cfg = _launcher("basic")
    assert cfg.hydra.sweeper.params["decoys.size"] == "1,5,10,20,50"
    assert cfg.study.name == "routing_stress" and cfg.workspace.mode == "group" and cfg.decoys.name == "pool"
