"""Emitted Dockerfiles across a sweep: valid, lean, one shared base, per-task COPY layers last."""

from __future__ import annotations

from dockerfile_parse import DockerfileParser

from aces_bench.config.compose import compose_spec
from aces_bench.emitters import emit_study


def _structure(path):
    parser = DockerfileParser(path=str(path / "environment" / "Dockerfile"))
    return [(i["instruction"], i["value"]) for i in parser.structure]


def test_every_task_of_a_sweep_shares_the_base_and_differs_only_in_the_final_copies(tmp_path):
    members = [["workspace=isolation"], ["workspace=group", "decoys=pool", "decoys.size=1"],
               ["workspace=group", "decoys=pool", "decoys.size=5"]]
    structures = []
    for i, member in enumerate(members):
        spec = compose_spec([*member, "workspace.base_image=debian:12-slim"], output_dir=tmp_path / str(i))
        result = emit_study(spec, tmp_path / str(i) / "tasks")
        structures += [_structure(t.path) for t in result.tasks]
    assert len(structures) == 3 * 32
    bases = {tuple(s[:-2]) for s in structures}
    assert bases == {(("FROM", "debian:12-slim"), ("WORKDIR", "/workspace"))}
    assert {tuple(s[-2:]) for s in structures} == {(("COPY", "skills/ /skills/"), ("COPY", "workspace/ /workspace/"))}
