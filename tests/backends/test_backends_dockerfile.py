"""The Dockerfile subset: what the local backend honours and the exact refusals."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from aces_bench.backends.dockerfile import (
    DEFAULT_PATH,
    CopyStep,
    RunStep,
    WorkdirStep,
    load_plan,
    parse_dockerfile,
)
from aces_bench.core.errors import AcesError, BackendError

FIX = "  fix: remove or rewrite that instruction, or run this task with backend=docker"


def dockerfile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    (tmp_path / "skills").mkdir(exist_ok=True)
    (tmp_path / "skills" / "SKILL.md").write_text("x")
    (tmp_path / "a.csv").write_text("1")
    (tmp_path / "b.csv").write_text("2")
    return path


REFUSED = [
    ("USER nobody", "USER", "the local sandbox runs every command as root"),
    ("VOLUME /data", "VOLUME", "the local sandbox has no volumes"),
    ("EXPOSE 8080", "EXPOSE", "the local sandbox publishes no ports"),
    ('ENTRYPOINT ["python3"]', "ENTRYPOINT",
     "the local sandbox starts no container process; Harbor runs commands through exec"),
    ('CMD ["sleep", "infinity"]', "CMD",
     "the local sandbox starts no container process; Harbor runs commands through exec"),
    ("HEALTHCHECK CMD true", "HEALTHCHECK", "put the check in task.toml as [environment].healthcheck instead"),
    ('SHELL ["/bin/bash", "-c"]', "SHELL", "RUN always uses /bin/sh -c in the local sandbox"),
    ("ONBUILD RUN true", "ONBUILD", "the local sandbox builds no images"),
    ("STOPSIGNAL SIGTERM", "STOPSIGNAL", "the local sandbox starts no container process"),
    ("MAINTAINER someone", "MAINTAINER", "deprecated by Docker; use LABEL"),
    ("ADD https://example.com/x.tgz /opt/", "ADD",
     "'https://example.com/x.tgz' is a remote source; the local sandbox builds without network"),
    ("ADD git@github.com:o/r.git /src", "ADD",
     "'git@github.com:o/r.git' is a remote source; the local sandbox builds without network"),
    ("COPY --from=builder /out /out", "COPY", "--from (multi-stage builds) is not supported"),
    ("FROM debian:12", "FROM", "multi-stage builds are not supported (second FROM)"),
    ("RUN <<EOF\necho hi\nEOF", "RUN", "heredoc syntax (<<EOF) is not supported"),
    ("COPY <<EOF /x.txt\nhello\nEOF", "COPY", "heredoc syntax (<<EOF) is not supported"),
    ("RUN --mount=type=cache,target=/root/.cache true", "RUN", "the flag --mount is not supported"),
    ("COPY --parents a.csv /x/", "COPY", "the flag --parents is not supported"),
]


@pytest.mark.parametrize(("line", "instruction", "reason"), REFUSED, ids=[f"{r[1]}-{i}" for i, r in enumerate(REFUSED)])
def test_backends_refused_instruction_exact_text(tmp_path, line, instruction, reason):
    path = dockerfile(tmp_path, f"FROM ubuntu:24.04\nWORKDIR /workspace\n{line}\nRUN true\n")
    with pytest.raises(BackendError) as info:
        parse_dockerfile(path)
    assert str(info.value) == (
        f"{path}:3: {instruction} is not supported by backend=local: {reason}\n{FIX}"
    )


def test_backends_refused_instruction_line_after_continuations(tmp_path):
    path = dockerfile(tmp_path, "FROM ubuntu:24.04\nRUN mkdir -p /a && \\\n    mkdir -p /b\n\n# note\nUSER 1000\n")
    with pytest.raises(BackendError) as info:
        parse_dockerfile(path)
    assert str(info.value).startswith(f"{path}:6: USER is not supported by backend=local")


def test_backends_unknown_instruction_lists_the_subset(tmp_path):
    path = dockerfile(tmp_path, "FROM ubuntu:24.04\nFROBNICATE x\n")
    with pytest.raises(BackendError) as info:
        parse_dockerfile(path)
    assert str(info.value) == (
        f"{path}:2: FROBNICATE is not supported by backend=local: it is outside the supported "
        "subset (FROM, ARG, ENV, LABEL, WORKDIR, COPY, ADD of local files, RUN)\n" + FIX
    )


def test_backends_instruction_before_from(tmp_path):
    path = dockerfile(tmp_path, "WORKDIR /x\nFROM ubuntu:24.04\n")
    with pytest.raises(BackendError, match=r"Dockerfile:1: WORKDIR is not supported by backend=local: only ARG"):
        parse_dockerfile(path)


def test_backends_docker_image_without_dockerfile(tmp_path):
    env_dir = tmp_path / "task" / "environment"
    env_dir.mkdir(parents=True)
    with pytest.raises(BackendError) as info:
        load_plan(env_dir, docker_image="python:3.12-slim")
    assert str(info.value) == (
        f"{tmp_path / 'task' / 'task.toml'}: [environment].docker_image = 'python:3.12-slim' is set "
        "but there is no environment/Dockerfile; backend=local cannot pull images\n"
        "  fix: add environment/Dockerfile starting with 'FROM python:3.12-slim', "
        "or run this task with backend=docker"
    )


def test_backends_no_dockerfile_and_compose(tmp_path):
    env_dir = tmp_path / "environment"
    env_dir.mkdir()
    with pytest.raises(BackendError, match="no Dockerfile: backend=local replays"):
        load_plan(env_dir)
    (env_dir / "docker-compose.yaml").write_text("services: {}\n")
    with pytest.raises(BackendError) as info:
        load_plan(env_dir)
    assert str(info.value) == (
        f"{env_dir / 'docker-compose.yaml'}: Docker Compose environments are not supported by "
        "backend=local (it runs one sandbox per trial)\n  fix: run this task with backend=docker"
    )


def test_backends_copy_source_errors(tmp_path):
    path = dockerfile(tmp_path, "FROM ubuntu:24.04\nCOPY ../secret /x\n")
    expected = r"Dockerfile:2: COPY is not supported by backend=local: source '../secret' is outside"
    with pytest.raises(BackendError, match=expected):
        parse_dockerfile(path)
    path = dockerfile(tmp_path, "FROM ubuntu:24.04\nCOPY missing.txt /x\n")
    with pytest.raises(BackendError) as info:
        parse_dockerfile(path)
    assert str(info.value) == (
        f"{path}:2: COPY source 'missing.txt' does not exist in the build context {tmp_path.resolve()}\n"
        "  fix: stage the file next to the Dockerfile or fix the path"
    )
    path = dockerfile(tmp_path, "FROM ubuntu:24.04\nCOPY *.json /x/\n")
    with pytest.raises(BackendError, match="matches no file"):
        parse_dockerfile(path)


def test_backends_syntax_errors_are_invalid_not_unsupported(tmp_path):
    path = dockerfile(tmp_path, "FROM ubuntu:24.04\nENV A=1 B\n")
    with pytest.raises(BackendError) as info:
        parse_dockerfile(path)
    assert str(info.value).startswith(f"{path}:2: invalid ENV: expected KEY=VALUE, got 'B'")
    assert isinstance(info.value, AcesError)
    with pytest.raises(BackendError, match="the Dockerfile has no FROM instruction"):
        parse_dockerfile(dockerfile(tmp_path, "# empty\n"))


def test_backends_plan_of_the_supported_subset(tmp_path):
    path = dockerfile(
        tmp_path,
        "# syntax=docker/dockerfile:1\n"
        "ARG BASE=ubuntu:24.04\n"
        "FROM ${BASE} AS main\n"
        'LABEL org.aces.task="t1" other=2\n'
        "ARG DATA=/workspace/data\n"
        "ENV PATH=/opt/tools/bin:$PATH LANG=C.UTF-8\n"
        'ENV GREETING="hello world" EMPTY=${UNSET:-fallback}\n'
        "ENV LEGACY the old form $LANG\n"
        "WORKDIR /workspace\n"
        "COPY skills/ /skills/\n"
        "COPY --chmod=600 a.csv ${DATA}/\n"
        "COPY *.csv data/\n"
        "COPY a.csv renamed.csv\n"
        "WORKDIR sub\n"
        "RUN mkdir -p out && \\\n    chmod 777 out\n"
        'RUN ["echo", "two words"]\n',
    )
    plan = parse_dockerfile(path)
    assert plan.base_image == "ubuntu:24.04"
    assert plan.labels == {"org.aces.task": "t1", "other": "2"}
    assert plan.workdir == "/workspace/sub"
    assert plan.env == {
        "PATH": f"/opt/tools/bin:{DEFAULT_PATH}",
        "LANG": "C.UTF-8",
        "GREETING": "hello world",
        "EMPTY": "fallback",
        "LEGACY": "the old form C.UTF-8",
    }
    assert plan.steps[0] == WorkdirStep(line=9, path="/workspace")
    assert plan.steps[1] == CopyStep(line=10, instruction="COPY", sources=("skills",), dest="/skills", into_dir=True)
    assert plan.steps[2] == CopyStep(
        line=11, instruction="COPY", sources=("a.csv",), dest="/workspace/data", into_dir=True, chmod=0o600
    )
    assert plan.steps[3].sources == ("a.csv", "b.csv") and plan.steps[3].dest == "/workspace/data"
    assert plan.steps[4] == CopyStep(
        line=13, instruction="COPY", sources=("a.csv",), dest="/workspace/renamed.csv", into_dir=False
    )
    run = plan.steps[6]
    assert isinstance(run, RunStep) and run.line == 15 and run.workdir == "/workspace/sub"
    assert run.env["DATA"] == "/workspace/data" and run.env["GREETING"] == "hello world"
    assert plan.steps[7].command == "echo 'two words'"


def test_backends_add_local_archive_is_marked_for_extraction(tmp_path):
    path = dockerfile(tmp_path, "FROM ubuntu:24.04\nADD bundle.tar.gz /opt/\n")
    with tarfile.open(tmp_path / "bundle.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "a.csv", arcname="a.csv")
    step = parse_dockerfile(path).steps[0]
    assert step.instruction == "ADD" and step.extract_archives and step.sources == ("bundle.tar.gz",)
