"""Render one TaskPlan as a Harbor task directory, content-addressed and deterministic.

Files are rendered in memory first; the task id is a hash of every rendered file, so
the same inputs give the same id and byte-identical files, and an unchanged task is
never rewritten. Directories are written under a temp name and renamed into place.
A ``RenderCache`` shared by one emit reads each skill, fixture and environment once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from importlib import resources
from pathlib import Path

import toml
from harbor.models.task.config import (
    AgentConfig,
    ArtifactConfig,
    EnvironmentConfig,
    PackageInfo,
    TaskConfig,
    VerifierConfig,
    VerifierEnvironmentMode,
)

from aces_bench import __version__
from aces_bench.cases import EvalCase
from aces_bench.config.spec import RunSpec
from aces_bench.core.conditions import SLUGS, stages_target
from aces_bench.core.errors import EmitError
from aces_bench.core.metrics import GRADER_VERSION
from aces_bench.emitters.environment import CustomEnvironment, dockerfile_text, load_environment
from aces_bench.emitters.native import native_config, native_dockerfile, native_files
from aces_bench.emitters.placebo import forced_preamble
from aces_bench.emitters.plan import PLUGINS_DIR, TaskPlan
from aces_bench.emitters.shape import config_shape, task_table_accepted

# The table's model and version live with its readers (TaskMetadata); re-exported here.
from aces_bench.emitters.task_metadata import TASK_METADATA_KEY, TASK_METADATA_VERSION
from aces_bench.emitters.writer import BLOB_DIR, BlobStore, write_task_dir
from aces_bench.inputs.skills import SKILL_FILE, Skill, staged_files
from aces_bench.verifier.check_answer import input_digests

_CHECKER = "check_answer.py"
# Where the agent's final workspace is kept under the trial's artifacts dir.
RETAINED_WORKSPACE = "workspace"
# At most this many input-word digests in case.json (about 10 bytes each).
MAX_INPUT_WORDS = 50_000


# Staged files of a skill by (folder, content hash): the hash covers exactly these
# bytes, so an entry can never be stale; kept across emits (a sweep's members, a bench).
_SKILL_FILES: dict[tuple[Path, str], tuple[tuple[str, bytes], ...]] = {}
_SKILL_FILES_MAX = 512


class RenderCache:
    """Memo for one emit: every skill folder, fixture, custom environment and native
    task is read from disk once, and every shared file hashed once, however many
    tasks stage it."""

    def __init__(self) -> None:
        self._envs: dict[Path, CustomEnvironment | None] = {}
        self._sha: dict[int, tuple[bytes, str]] = {}
        self._case_hash: dict[int, tuple[EvalCase, str]] = {}
        self._stores: dict[Path, BlobStore] = {}
        self._files: dict[Path, bytes] = {}
        self._native: dict[Path, dict[str, bytes]] = {}
        self._native_configs: dict[Path, TaskConfig] = {}
        # task_config's shared part per (environment, credentials); the environment is
        # held so its id stays unique.
        self.configs: dict[tuple, tuple[object, TaskConfig]] = {}
        self._tomls: dict[str, tuple[str, str | None] | None] = {}
        self._tables = _TableDumper()
        self._rests: dict[tuple[int, ...], tuple[tuple, dict, str]] = {}
        # task id -> (task.toml bytes written, their config shape): taken by the dir check.
        self.config_shapes: dict[str, tuple[bytes, str]] = {}
        self.checker = resources.files("aces_bench.verifier").joinpath(_CHECKER).read_bytes()

    def skill_files(self, skill: Skill) -> tuple[tuple[str, bytes], ...]:
        key = (skill.path, skill.content_hash)
        if key not in _SKILL_FILES:
            if len(_SKILL_FILES) >= _SKILL_FILES_MAX:
                _SKILL_FILES.clear()
            root = skill.path
            _SKILL_FILES[key] = tuple((p.relative_to(root).as_posix(), p.read_bytes()) for p in staged_files(root))
        return _SKILL_FILES[key]

    def sha(self, data: bytes) -> str:
        """sha256 of ``data``, memoised by object: shared bytes come from this cache."""
        hit = self._sha.get(id(data))
        if hit is not None and hit[0] is data:
            return hit[1]
        digest = hashlib.sha256(data).hexdigest()
        self._sha[id(data)] = (data, digest)  # holding ``data`` keeps its id unique
        return digest

    def case_hash(self, case: EvalCase) -> str:
        hit = self._case_hash.get(id(case))
        if hit is not None and hit[0] is case:
            return hit[1]
        digest = case.content_hash()
        self._case_hash[id(case)] = (case, digest)
        return digest

    def task_toml(self, config: TaskConfig) -> str:
        """``config.model_dump_toml()``, the same text (see ``task_toml_shaped``)."""
        return self.task_toml_shaped(config)[0]

    def task_toml_shaped(self, config: TaskConfig) -> tuple[str, str | None]:
        """``config.model_dump_toml()``, the same text, with only the [task] and
        [metadata] tables serialised per task; and the text's ``config_shape``
        (emitters/shape.py), or None when it is left to be parsed from the file.

        Harbor's dump is the root keys, then each table as its own ``toml.dumps``,
        stripped and joined by blank lines. Tasks of a study differ only in [task] and
        [metadata], so the rest is dumped once per distinct rest (a template holding a
        placeholder for each of the two tables) and each task's two tables are put in.
        The template is parsed once (its shape, with placeholder tables); each task's
        two tables are parsed back on their own and must give the values dumped: the
        TOML writer mangles some strings silently (an ESC comes out as ``x1b``), which
        is refused here, and a text that round-trips has the template's shape whenever
        Harbor accepts its [task] (every other key is the template's; [metadata] is any table).
        """
        rest = self.rest(config)[1]
        if rest not in self._tomls:
            self._tomls[rest] = _toml_template(config)
        template = self._tomls[rest]
        if template is None:  # a placeholder did not come out once each: Harbor's own dump
            return config.model_dump_toml(), None
        data = TaskConfig._without_none(config.model_dump(mode="json", include={"task", "metadata"}))
        if set(data) != {"task", "metadata"} or not data["metadata"]:
            return config.model_dump_toml(), None  # a table Harbor's dump would leave out
        tables = self._tables.dump(data["task"], data["metadata"])
        if tables is None:  # a value needing a closer look: dumped whole, round trip naming the key
            tables = tuple(toml.dumps({k: data[k]}).strip() for k in ("task", "metadata"))
            _check_round_trip(f"{tables[0]}\n\n{tables[1]}\n", data, config.task.name)
        text = template[0].replace(_TASK_SLOT, tables[0], 1).replace(_METADATA_SLOT, tables[1], 1)
        return text, (template[1] if task_table_accepted(data["task"]) else None)

    def rest(self, config: TaskConfig) -> tuple[dict, str]:
        """``config.model_dump(mode="json")`` without [task] and [metadata], and its
        sorted JSON: dumped once per distinct set of the other fields' objects.

        Every task config of an emit is a ``model_copy`` of one shared config per
        environment (``task_config``) with its own [task] and [metadata]: its other
        fields are that config's very objects, which nothing modifies. They are held
        here, so an id stays theirs while it is a key."""
        values = (*(v for k, v in config.__dict__.items() if k not in _PER_TASK), config.__pydantic_extra__)
        key = tuple(map(id, values))
        hit = self._rests.get(key)
        if hit is None or any(a is not b for a, b in zip(hit[0], values, strict=True)):
            dump = config.model_dump(mode="json", exclude=set(_PER_TASK))
            hit = self._rests[key] = (values, dump, json.dumps(dump, sort_keys=True))
        return hit[1], hit[2]

    def store(self, tasks_root: Path) -> BlobStore:
        if tasks_root not in self._stores:
            self._stores[tasks_root] = BlobStore(tasks_root / BLOB_DIR)
        return self._stores[tasks_root]

    def environment(self, skill: Skill) -> CustomEnvironment | None:
        if skill.path not in self._envs:
            self._envs[skill.path] = load_environment(skill)
        return self._envs[skill.path]

    def file(self, path: Path) -> bytes:
        if path not in self._files:
            self._files[path] = path.read_bytes()
        return self._files[path]

    def native(self, task_dir: Path) -> tuple[dict[str, bytes], TaskConfig]:
        if task_dir not in self._native:
            self._native[task_dir] = native_files(task_dir)
            self._native_configs[task_dir] = native_config(task_dir)
        return self._native[task_dir], self._native_configs[task_dir]


_PER_TASK = ("task", "metadata")  # the TaskConfig fields each task has its own of
_TASK_SLOT = "\0aces-task-table\0"
_METADATA_SLOT = "\0aces-metadata-table\0"
_PLACEHOLDER = {"task": "aces/placeholder-task-0c1f", "metadata": "placeholder-metadata-0c1f"}


def _toml_template(config: TaskConfig) -> tuple[str, str | None] | None:
    """``config``'s task.toml with its [task] and [metadata] tables replaced by slots,
    and the config shape of that text with placeholder tables; or None when a
    placeholder table is not found exactly once (Harbor changed its dump)."""
    marked = config.model_copy(update={"task": PackageInfo(name=_PLACEHOLDER["task"]),
                                       "metadata": {_PLACEHOLDER["metadata"]: 1}})
    data = TaskConfig._without_none(marked.model_dump(mode="json", include={"task", "metadata"}))
    text = marked.model_dump_toml()
    shape = config_shape(text)
    for key, slot in (("task", _TASK_SLOT), ("metadata", _METADATA_SLOT)):
        table = toml.dumps({key: data[key]}).strip()
        if text.count(table) != 1 or text.count(_PLACEHOLDER[key]) != 1:
            return None
        text = text.replace(table, slot)
    return text, shape


_SLOT_NAME = "aces-slot-7d2e-"
_SLOT = re.compile(r'"aces-slot-7d2e-(\d+)"')
_PLAIN = re.compile(r"[ !#-&(-\[\]-~]*")  # printable ASCII but quotes and backslash


class _TableDumper:
    """``toml.dumps`` of a task's [task] and [metadata] tables, the same text, from a
    template per table structure with a slot for each string value.

    The toml writer writes a string value as ``dump_value(s)`` wherever it is (a key's
    value, an array item, a table of an array of tables): nothing else of the text
    depends on it. So the tables are dumped once per structure (keys, order, every
    non-string value) with placeholder strings, and each task's strings are put into
    the placeholders' places. The template is parsed back once and must give the
    placeholder tables; each distinct string is dumped once and, unless it is plain
    printable ASCII without quotes or backslashes (then it is written as is, between
    double quotes, which is ``dump_value``'s text and reads back unchanged), parsed back
    alone and must give itself. So the text read back gives every value dumped, as
    the whole-text round trip checked; anything else (a string the writer mangles, a
    template whose slots are not each found once) returns None, for the caller's
    whole dump and round trip, which names the key.
    """

    def __init__(self) -> None:
        self._templates: dict[str, tuple[str, str] | None] = {}
        self._strings: dict[str, str | None] = {}
        self._encoder = toml.TomlEncoder()

    def dump(self, task: dict, metadata: dict) -> tuple[str, str] | None:
        strings: list[str] = []
        skeleton = (_skeleton(task, strings), _skeleton(metadata, strings))
        key = json.dumps(skeleton)
        if key not in self._templates:
            self._templates[key] = self._template(*skeleton, len(strings))
        template = self._templates[key]
        if template is None:
            return None
        dumped = [self._string(v) for v in strings]
        if None in dumped:
            return None
        return tuple(_SLOT.sub(lambda m: dumped[int(m.group(1))], t) for t in template)  # type: ignore[return-value]

    def _string(self, value: str) -> str | None:
        if value not in self._strings:
            if _PLAIN.fullmatch(value):
                out: str | None = f'"{value}"'
            else:
                out = str(self._encoder.dump_value(value))
                try:
                    back = tomllib.loads(f"v = {out}\n")
                except tomllib.TOMLDecodeError:
                    back = None
                if back != {"v": value}:
                    out = None
            self._strings[value] = out
        return self._strings[value]

    @staticmethod
    def _template(task: dict, metadata: dict, n: int) -> tuple[str, str] | None:
        tables = (toml.dumps({"task": task}).strip(), toml.dumps({"metadata": metadata}).strip())
        try:
            back = tomllib.loads(f"{tables[0]}\n\n{tables[1]}\n")
        except tomllib.TOMLDecodeError:
            return None
        found = [int(m.group(1)) for t in tables for m in _SLOT.finditer(t)]
        if back != {"task": task, "metadata": metadata} or sorted(found) != list(range(n)):
            return None
        return tables


def _skeleton(value, strings: list[str]):
    """``value`` with each string replaced by the name of its slot (appended to ``strings``)."""
    if isinstance(value, str):
        strings.append(value)
        return f"{_SLOT_NAME}{len(strings) - 1}"
    if isinstance(value, dict):
        return {k: _skeleton(v, strings) for k, v in value.items()}
    if isinstance(value, list):
        return [_skeleton(v, strings) for v in value]
    return value


def _check_round_trip(text: str, data: dict, task: str) -> None:
    """Refuse a [task]/[metadata] the TOML writer did not write faithfully, naming the key."""
    try:
        back = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        back = {"<unparsable>": str(exc)}
    if back == data:
        return
    key = next((p for p in _leaf_paths(data) if _at(back, p) != _at(data, p)), None)
    where = ".".join(map(str, key)) if key else "task.toml"
    raise EmitError(f"{task}: task.toml would not hold {where} = {_at(data, key) if key else ''!r} as given "
                    "(the TOML writer changes it: a control character?)", where=where,
                    fix="remove control characters from the skill's name/version and the case's id and fields")


def _leaf_paths(value, path: tuple = ()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaf_paths(v, (*path, i))
    else:
        yield path


def _at(value, path) -> object:
    for part in path or ():
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _forced_block(plan: TaskPlan, skills_dir: str, cache: RenderCache | None) -> str:
    """The forced arm's pre-activation (the target's SKILL.md), else nothing."""
    if plan.condition != "forced":
        return ""
    files = dict((cache or RenderCache()).skill_files(plan.target))
    skill_md = files[SKILL_FILE].decode("utf-8", errors="replace")
    return forced_preamble(plan.target, skill_md, skills_dir)


def instruction_text(plan: TaskPlan, spec: RunSpec, cache: RenderCache | None = None) -> str:
    """The case prompt and the fixed footer the agents and graders rely on (the forced
    arm puts the target's SKILL.md before the prompt)."""
    ws = spec.workspace
    lines = [_forced_block(plan, ws.skills_dir, cache) + plan.case.prompt.strip(), "", "---",
             f"Working directory: {ws.workdir}"]
    if plan.case.files:
        lines.append("Input files:")
        lines += [f"- {f.dest}" for f in plan.case.files]
    lines.append(f"Write your final answer to {ws.workdir.rstrip('/')}/{ws.answer_file}.")
    return "\n".join(lines) + "\n"


# The verifier's PATH: the image's own binaries, never a dir the agent could write to.
VERIFIER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def test_sh_text(spec: RunSpec) -> str:
    """The verifier script: the checker on the agent's final workspace, run isolated.

    Harbor runs it in a separate environment (``[verifier] environment_mode =
    "separate"``): the agent's environment is stopped first and the workspace arrives
    as copied data (the task's ``artifacts``), which also keeps it for the host-side
    graders (``<trial>/artifacts/workspace``). Nothing the agent wrote can run: an empty
    environment (``env -i``) with the image's PATH, and ``python3 -I -S`` (no user
    site, no ``PYTHON*`` variable, neither the script's dir nor the cwd on sys.path, no
    site-packages ``.pth``).
    """
    ws = spec.workspace
    return f"""#!/bin/sh
# aces-bench verifier: deterministic answer checks on the agent's final workspace, which
# Harbor copied into this fresh environment as data. Nothing from the workspace runs:
# an empty environment, the image's own PATH, python3 -I -S. Needs only python3.
set -u
PATH={VERIFIER_PATH}
export PATH
mkdir -p /logs/verifier
exec env -i PATH="$PATH" HOME=/nonexistent LANG=C.UTF-8 python3 -I -S /tests/{_CHECKER} /tests/case.json {ws.workdir} /logs/verifier
"""


def _custom_env(plan: TaskPlan, spec: RunSpec, cache: RenderCache) -> CustomEnvironment | None:
    if plan.native_task is not None or not spec.workspace.custom_environment:
        return None
    return cache.environment(plan.target)


def _environment_meta(plan: TaskPlan, env: CustomEnvironment | None, native_cfg: TaskConfig | None) -> dict:
    if plan.native_task is not None and native_cfg is not None:
        return {
            "source": f"evals/harbor/{plan.native_task.name}",
            "compose": any((plan.native_task / "environment" / c).is_file()
                           for c in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")),
            "mcp_servers": sorted(s.name for s in native_cfg.environment.mcp_servers),
        }
    if env is None:
        return {"source": "default", "compose": False, "mcp_servers": []}
    return {
        "source": "evals/environment",
        "content_hash": env.content_hash,
        "custom_dockerfile": env.dockerfile is not None,
        "compose": env.compose_file is not None,
        "mcp_servers": sorted(s.name for s in env.mcp_servers),
    }


def task_metadata(plan: TaskPlan, spec: RunSpec, cache: RenderCache | None = None) -> dict:
    """The ``[metadata.aces]`` table: everything the task made available, with hashes."""
    cache = cache or RenderCache()
    case = plan.case
    # with_skill and forced stage the target itself; a placebo stages only its name and description.
    with_skill = stages_target(plan.condition)
    env = _custom_env(plan, spec, cache)
    native_cfg = cache.native(plan.native_task)[1] if plan.native_task is not None else None
    workdir = spec.workspace.workdir
    skills_dir = spec.workspace.skills_dir
    if native_cfg is not None:
        workdir = native_cfg.environment.workdir or ""
        skills_dir = native_cfg.environment.skills_dir or skills_dir
    meta = {
        "schema_version": TASK_METADATA_VERSION,
        "aces_bench_version": __version__,
        "grader_version": GRADER_VERSION,
        "skill": plan.target.name,
        # Only the with-skill task depends on the target's content: a baseline task
        # (and its finished trials) stays valid across revisions of the skill.
        "skill_hash": plan.target.content_hash if with_skill else "",
        "skill_version": (plan.target.version or "") if with_skill else "",
        "intervention": plan.intervention_name,
        "intervention_kind": plan.intervention_kind,
        "intervention_members": list(plan.intervention_members or (plan.target.name,)),
        "case_id": case.id,
        "case_kind": case.kind or "",
        "case_hash": cache.case_hash(case),
        "case_source": "native_harbor_task" if plan.native_task is not None else case.source,
        "negative_control": case.is_negative_control,
        "expected_skill": case.expected_skill or "",
        "expected_script": case.expected_script or "",
        "condition": plan.condition,
        "workspace_mode": plan.workspace_mode,
        "decoy_set": plan.decoy_set,
        "decoy_size": plan.decoy_size if plan.decoy_size is not None else -1,
        "decoy_seed": plan.decoy_seed if plan.decoy_seed is not None else -1,
        "n_visible_skills": len(plan.staged),
        "allowed_skills": list(plan.allowed_skills),
        "staged_skills": [
            {
                "name": s.skill.name,
                "role": s.role,
                "content_hash": s.skill.content_hash,
                "version": s.skill.version or "",
            }
            for s in plan.staged
        ],
        "environment": _environment_meta(plan, env, native_cfg),
        "workdir": workdir,
        "skills_dir": skills_dir,
        "answer_file": spec.workspace.answer_file if plan.native_task is None else "",
    }
    if plan.plugins and plan.native_task is None:
        p = plan.plugins[0]
        meta["plugin"] = {"name": p.name, "dir": f"{PLUGINS_DIR}/{p.name}", "parts": list(p.parts),
                          "read_by_harness": [x for x in p.parts if x in p.read_by_harness],
                          "not_read_by_harness": list(p.not_read)}
    return meta


def _description(plan: TaskPlan) -> str:
    return f"{plan.intervention_name} / {plan.case.id} / {plan.condition} / {plan.workspace_mode}"


def task_config(plan: TaskPlan, spec: RunSpec, task_id: str, cache: RenderCache | None = None,
                metadata: dict | None = None) -> TaskConfig:
    cache = cache or RenderCache()
    metadata = {TASK_METADATA_KEY: metadata if metadata is not None else task_metadata(plan, spec, cache)}
    if plan.native_task is not None:
        return _native_task_config(plan, spec, task_id, metadata, cache)
    env = _custom_env(plan, spec, cache)
    creds = credential_templates(plan.case)
    # Validating a TaskConfig (Harbor's artifact checks) was most of rendering a task: the
    # part every task of a study shares is validated once per environment and credential
    # set, and each task's copy only gets its own name, description and metadata.
    key = (id(env), tuple(creds))
    base = cache.configs.get(key)
    if base is None or base[0] is not env:
        base = cache.configs[key] = (env, _shared_config(spec, env, creds))
    return base[1].model_copy(update={
        "task": PackageInfo(name=f"aces/{task_id}", description=_description(plan)), "metadata": metadata})


def _shared_config(spec: RunSpec, env, creds: dict[str, str]) -> TaskConfig:
    """What ``task_config`` gives every task of ``spec`` with this environment and credentials."""
    ws = spec.workspace
    return TaskConfig(
        task=PackageInfo(name="aces/pending", description=""),
        # The verifier runs in a fresh environment that receives only the agent's
        # workspace, copied (kept for the host graders as artifacts/workspace).
        verifier=VerifierConfig(timeout_sec=ws.verifier_timeout_sec,
                                environment_mode=VerifierEnvironmentMode.SEPARATE),
        artifacts=[ArtifactConfig(source=ws.workdir, destination=RETAINED_WORKSPACE)],
        agent=AgentConfig(timeout_sec=ws.agent_timeout_sec),
        environment=EnvironmentConfig(
            cpus=ws.cpus,
            memory_mb=ws.memory_mb,
            storage_mb=ws.storage_mb,
            skills_dir=ws.skills_dir,
            workdir=ws.workdir,
            network_mode=ws.network,
            mcp_servers=list(env.mcp_servers) if env else [],
            env=creds,
        ),
    )


def credential_templates(case) -> dict[str, str]:
    """``NAME = "${NAME}"`` for each credential the case needs.

    Harbor resolves the template from the host environment when the trial starts, so
    the task dir holds the variable's name only, never its value.
    """
    return {name: "${" + name + "}" for name in sorted(case.required_credentials)}


def _native_task_config(plan: TaskPlan, spec: RunSpec, task_id: str, metadata: dict,
                        cache: RenderCache) -> TaskConfig:
    assert plan.native_task is not None
    config = cache.native(plan.native_task)[1]
    env_update: dict = {"skills_dir": config.environment.skills_dir or spec.workspace.skills_dir}
    if not (plan.native_task / "environment" / "Dockerfile").is_file():
        env_update["docker_image"] = None  # replaced by the emitted Dockerfile FROM it
    author_desc = config.task.description if config.task is not None else ""
    return config.model_copy(
        update={
            "task": PackageInfo(name=f"aces/{task_id}", description=author_desc or _description(plan)),
            "metadata": {**config.metadata, **metadata},
            "environment": config.environment.model_copy(update=env_update),
        }
    )


def _staged_skill_files(plan: TaskPlan, cache: RenderCache) -> dict[str, bytes]:
    files = {}
    for staged in plan.staged:
        for rel, data in staged.files if staged.files is not None else cache.skill_files(staged.skill):
            files[f"environment/skills/{staged.skill.name}/{rel}"] = data
    return files


def render_files(plan: TaskPlan, spec: RunSpec, cache: RenderCache | None = None) -> dict[str, bytes]:
    """Every file of the task except task.toml, keyed by task-relative posix path."""
    cache = cache or RenderCache()
    if plan.native_task is not None:
        return _render_native(plan, spec, cache)
    ws = spec.workspace
    env = _custom_env(plan, spec, cache)
    files: dict[str, bytes] = {
        "instruction.md": instruction_text(plan, spec, cache).encode(),
        "environment/Dockerfile": dockerfile_text(ws.base_image, ws.workdir, ws.skills_dir, env,
                                                  PLUGINS_DIR if plan.plugins else None).encode(),
        "tests/test.sh": test_sh_text(spec).encode(),
        f"tests/{_CHECKER}": cache.checker,
    }
    if env is not None:
        files.update({f"environment/{rel}": data for rel, data in env.context.items()})
    case_json = {
        "id": plan.case.id,
        "answer_file": ws.answer_file,
        "checks": [c.as_checker_dict() for c in plan.case.checks],
    }
    if plan.case.checks:
        # The strict checks refuse an answer that is a dump of the input: they get the
        # input's words as digests (tests/ is uploaded only after the agent has finished).
        case_json["input_words"] = input_word_digests(plan, cache)
    files["tests/case.json"] = (json.dumps(case_json, indent=2, sort_keys=True) + "\n").encode()
    files.update(_staged_skill_files(plan, cache))
    for plugin in plan.plugins:
        files.update({f"environment/plugins/{plugin.name}/{rel}": data for rel, data in plugin.files})
    for f in plan.case.files:
        files[f"environment/workspace/{f.dest}"] = cache.file(plan.target.path / f.src)
    return files


def input_word_digests(plan: TaskPlan, cache: RenderCache) -> list[str]:
    """Digests of the distinct words of the case's prompt and text fixtures (``check_answer.input_digests``)."""
    texts = [plan.case.prompt]
    for f in plan.case.files:
        data = cache.file(plan.target.path / f.src)
        if b"\0" not in data[:8192]:  # a binary fixture has no words an answer could echo
            texts.append(data.decode("utf-8", errors="replace"))
    return input_digests(texts)[:MAX_INPUT_WORDS]


def _render_native(plan: TaskPlan, spec: RunSpec, cache: RenderCache) -> dict[str, bytes]:
    assert plan.native_task is not None
    native, config = cache.native(plan.native_task)
    skills_dir = config.environment.skills_dir or spec.workspace.skills_dir
    files = dict(native)
    forced = _forced_block(plan, skills_dir, cache)
    if forced and "instruction.md" in files:
        files["instruction.md"] = forced.encode() + files["instruction.md"]
    files["environment/Dockerfile"] = native_dockerfile(native, config, skills_dir, plan.native_task)
    files.update(_staged_skill_files(plan, cache))
    return files


def _digest(digests: dict[str, str], metadata: dict, config: TaskConfig, cache: RenderCache | None = None) -> str:
    h = hashlib.sha256()
    for rel in sorted(digests):
        h.update(rel.encode() + b"\0" + bytes.fromhex(digests[rel]))
    h.update(json.dumps(metadata, sort_keys=True).encode())
    # Everything else task.toml says (network mode, limits, timeouts, env, MCP servers)
    # changes what a trial does, so it is part of the id too; only the name (the id
    # itself) is left out. It is config.model_dump(mode="json", exclude={"metadata":
    # True, "task": {"name"}}), the part shared by the emit's tasks dumped once.
    settings = dict((cache or RenderCache()).rest(config)[0])
    settings["task"] = None if config.task is None else config.task.model_dump(mode="json", exclude={"name"})
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return h.hexdigest()


def task_slug(plan: TaskPlan) -> str:
    return f"{plan.intervention_name}.{plan.case.id}.{plan.workspace_mode}.{SLUGS[plan.condition]}"


def _mode(rel: str, native_task: Path | None) -> int:
    if rel.endswith(".sh") or "/scripts/" in rel:
        return 0o755
    # A native task's other files keep their author's executable bit (a test.py the
    # verifier runs directly, say).
    if native_task is not None:
        source = native_task / rel
        if source.is_file() and os.access(source, os.X_OK):
            return 0o755
    return 0o644


def finished_task(tasks_root: Path, task_id: str) -> Path | None:
    """The dir of ``task_id`` if a finished one is there (its task.toml is written last)."""
    final = tasks_root / task_id
    return final if (final / "task.toml").is_file() else None


def _rendered(plan: TaskPlan, spec: RunSpec, cache: RenderCache):
    """(task_id, files, digests, config) of a task, rendered in memory."""
    files = render_files(plan, spec, cache)
    digests = {rel: cache.sha(data) for rel, data in files.items()}
    metadata = task_metadata(plan, spec, cache)
    config = task_config(plan, spec, "pending", cache, metadata)
    return f"{task_slug(plan)}-{_digest(digests, metadata, config, cache)[:12]}", files, digests, config


def task_id_of(plan: TaskPlan, spec: RunSpec, cache: RenderCache | None = None) -> str:
    """The id ``emit_task`` gives this task (its content address), without writing anything."""
    return _rendered(plan, spec, cache or RenderCache())[0]


def emit_task(plan: TaskPlan, spec: RunSpec, tasks_root: Path, cache: RenderCache | None = None) -> tuple[str, Path, bool]:
    """Write the task dir if absent. Returns (task_id, path, written)."""
    cache = cache or RenderCache()
    task_id, files, digests, config = _rendered(plan, spec, cache)
    if (done := finished_task(tasks_root, task_id)) is not None:
        return task_id, done, False
    final = tasks_root / task_id
    named = config.model_copy(update={"task": config.task.model_copy(update={"name": f"aces/{task_id}"})})
    text, shape = cache.task_toml_shaped(named)
    files["task.toml"] = text.encode()
    if shape is not None:
        cache.config_shapes[task_id] = (files["task.toml"], shape)
    modes = {rel: _mode(rel, plan.native_task) for rel in files}
    empty = ("environment/skills", "environment/workspace") if plan.native_task is None else ("environment/skills",)
    if plan.plugins and plan.native_task is None:
        empty += ("environment/plugins",)
    write_task_dir(final, files, digests, modes, cache.store(tasks_root), unique="task.toml", empty_dirs=empty)
    return task_id, final, True
