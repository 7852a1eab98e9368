"""The ``aces-bench`` command.

``aces-bench [run] [overrides...]`` and ``aces-bench -m ...`` are the Hydra app (one
study, or a multirun sweep). ``scan``, ``report``, ``grade`` and ``dataset`` are plain
subcommands. User errors print one message and exit 2, never a traceback; Ctrl-C and
SIGTERM end every command with one line and exit 130 / 143.
"""

from __future__ import annotations

import signal


def _early_sigterm(signum, frame):  # until main() installs the real handler (imports take seconds)
    import sys

    print("terminated: aces-bench stopped while starting; nothing was written", file=sys.stderr)
    raise SystemExit(143)


if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
    signal.signal(signal.SIGTERM, _early_sigterm)

import importlib
import logging
import os
import sys
from pathlib import Path

from aces_bench.core.errors import AcesError, ConfigError, RunError, output_error
from aces_bench.run.offline import set_offline_defaults

SUBCOMMANDS = {
    "eval": ("aces_bench.datasets.evaluate", "evaluate skill folders, a folder of skills or a plugin: cases drafted "
             "if none, a paired study, the verdict table"),
    "scan": ("aces_bench.static.cli", "static scan of skill folders (structure, rubric, security)"),
    "report": ("aces_bench.analysis.cli", "regenerate reports from stored results (or SkillsBench data)"),
    "grade": ("aces_bench.grading.cli", "grade the trials of any Harbor job dir"),
    "dataset": ("aces_bench.datasets.cli", "create, refine, check and show a skill's evaluation cases"),
    "trigger": ("aces_bench.datasets.trigger_cli", "trigger evaluation (precision/recall, confusion) and description optimisation"),
    "podman": ("aces_bench.backends.podman", "build the offline python:3.12-slim image for backend=podman; check it"),
    "agents": ("aces_bench.agents.clis", "install the npm agent CLIs (claude-code, codex, opencode) into the cache"),
    "ci": ("aces_bench.ci.cli", "skill CI: run changed skills, compare with the last good run, apply a policy"),
    "plan": ("aces_bench.study.plan", "before any trial: trials, cost and detectable lift of the fixed and sequential design"),
}

log = logging.getLogger("aces_bench")


def _study(*args, **kwargs):
    """The Hydra app. Hydra, Harbor and the config store are imported only here, so
    the plain subcommands (``scan``, ``report``...) start without them."""
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import DictConfig

    from aces_bench.config.store import CONFIG_NAME, CONFIG_PATH, register

    register()

    @hydra.main(config_path=CONFIG_PATH, config_name=CONFIG_NAME, version_base="1.3")
    def study(cfg: DictConfig) -> None:
        # Imported when a study runs: `--help` and `--cfg` never validate a spec.
        from hydra.types import RunMode

        from aces_bench.config.spec import build_run_spec
        from aces_bench.study.console import quiet_console
        from aces_bench.study.entry import run_study

        quiet_console()  # Hydra has just configured logging for this job
        hc = HydraConfig.get()
        spec = None
        try:
            spec = build_run_spec(cfg, overrides=list(hc.overrides.task), choices=dict(hc.runtime.choices))
            if hc.mode == RunMode.MULTIRUN:
                from aces_bench.study.sweep import refusal

                refused = refusal(Path(hc.sweep.dir))
                if refused is not None:
                    raise refused  # the sweep's total was refused before any member ran
                # A sweep's members share one spend ledger, at the sweep's root: the cap is the sweep's.
                spec = spec.model_copy(update={"budget_dir": Path(hc.sweep.dir).resolve()})
                from aces_bench.run.progress import one_line

                with one_line(f"sweep member {hc.job.num + 1}"):  # one progress line per member
                    run_study(spec)
            else:
                run_study(spec)
        except AcesError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(getattr(exc, "exit_code", 2))
        except OSError as exc:  # a full disk or an unwritable output folder: one line, not a traceback
            error = output_error(exc, where=exc.filename or (spec.output_dir if spec is not None else None))
            if error is None:
                raise
            print(f"error: {error}", file=sys.stderr)
            sys.exit(2)

    return study(*args, **kwargs)


def _usage() -> str:
    lines = [
        "usage: aces-bench eval PATH [PATH...] [group=option ...] [group.key=value ...]",
        "       aces-bench [run] [-m] [-v] [group=option ...] [group.key=value ...]",
        "       aces-bench {" + ",".join(SUBCOMMANDS) + "} ...",
        "",
        "Evaluate your skill (one command: drafts cases if it has none, runs the paired study, prints the verdict):",
        "  aces-bench eval ./my-skill                   offline: reference agent, local sandbox, heuristic judge",
        "  aces-bench eval ./my-skill harness=codex model=gpt-4o study.n_attempts=3",
        "",
        "Run a paired with/without-skill study (Hydra app; -m sweeps comma-separated options):",
        "  aces-bench                                   the demo study on the embedded defaults",
        "  aces-bench -m harness=reference workspace=isolation,group decoys=paper",
        "  aces-bench skill=custom 'skill.paths=[/path/to/my-skill]'",
        "  aces-bench --cfg job                         print the composed config",
        "  aces-bench -v ...                            show debug logs (Harbor's too) on the console",
        "",
        "Subcommands (aces-bench <command> --help for each):",
    ]
    lines += [f"  {name:<9} {desc}" for name, (_, desc) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def _study_help(overrides: list[str]) -> str:
    """The subcommands, the study app's config groups and the config ``overrides`` compose.

    Written here rather than left to Hydra's ``--help``, which deep-copies its whole config
    repository (the ConfigStore singleton included) once per group it lists: about a second
    of CPU. ``--hydra-help`` still prints Hydra's own flags."""
    from omegaconf import OmegaConf

    from aces_bench.config.compose import compose_config
    from aces_bench.config.store import group_options

    cfg = compose_config(overrides)
    groups = [f"{group}: {', '.join(options)}" for group, options in group_options().items()]
    return "\n".join([
        _usage(), "",
        "The study app (Hydra; aces-bench --hydra-help for Hydra's own flags):", "",
        "== Configuration groups ==", "Compose your configuration from those groups (group=option)", "",
        *groups, "",
        "== Config ==", "Override anything in the config (foo.bar=value)", "",
        OmegaConf.to_yaml(cfg).rstrip(),
    ])


def _run_hydra() -> None:
    """Run the Hydra app; compose errors become a ConfigError instead of Hydra's own report.

    Hydra prints compose errors itself and exits 1; with HYDRA_FULL_ERROR set it raises
    them instead, so they can be turned into one ``error:``/``fix:`` message (exit 2).
    A user who set HYDRA_FULL_ERROR asked for Hydra's tracebacks and gets them.
    """
    if os.environ.get("HYDRA_FULL_ERROR"):
        _study()
        return
    from hydra.errors import ConfigCompositionException, OverrideParseException
    from omegaconf.errors import OmegaConfBaseException

    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        _study()
    except (ConfigCompositionException, OverrideParseException) as exc:
        # Imported on a compose error only: it brings the run spec's models.
        from aces_bench.config.compose import compose_error

        error = compose_error(exc)
        if error is None:
            raise
        raise error from None
    except OSError as exc:
        error = _run_dir_error(exc) or output_error(exc)
        if error is None:
            raise
        raise error from None
    except OmegaConfBaseException as exc:
        # A resolver of the run dir refused (``aces_name``: study.name=../../x), before any write.
        refusal = _chained(exc, AcesError)
        if refusal is None:
            raise
        raise refusal from None
    except ValueError as exc:
        # After OmegaConfBaseException: omegaconf's resolution errors are ValueErrors too.
        if str(exc).startswith("Only one of --run, --multirun, --cfg"):
            raise ConfigError(str(exc), where="aces-bench",
                              fix="drop -m to print one config with --cfg job, or drop --cfg to run the sweep") from None
        # logging.config wraps the OSError of Hydra's log file (<run dir>/cli.log) in a
        # ValueError ("Unable to configure handler 'file'").
        cause = exc.__cause__
        error = output_error(cause) if isinstance(cause, OSError) else None
        if error is None:
            raise
        raise error from None
    finally:
        os.environ.pop("HYDRA_FULL_ERROR", None)


def _chained(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of type ``kind`` in ``exc``'s cause/context chain, else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _run_dir_error(exc: OSError) -> RunError | None:
    """Hydra's own failure to create its run dir (the output folder) as a RunError, else None."""
    tb, from_hydra = exc.__traceback__, False
    while tb is not None:
        from_hydra |= tb.tb_frame.f_code.co_filename.endswith(os.path.join("hydra", "core", "utils.py"))
        tb = tb.tb_next
    if not from_hydra or not exc.filename:
        return None
    where = Path(str(exc.filename))
    problem = "is a file" if where.exists() and not where.is_dir() else f"cannot be created ({exc.strerror})"
    return RunError(f"the output folder {problem}", where=where,
                    fix="set hydra.run.dir (or study.name) to a folder you can write, or move that file away")


def _output_arg(argv: list[str]) -> str | None:
    """Where a subcommand writes, from its arguments, for an OSError that names no file (a
    write that fails on close): ``--out``/``--json``/``--html``, else the last folder named
    (``dataset create <skill>`` writes into the skill)."""
    for flag in ("--out", "--json", "--html"):
        for i, arg in enumerate(argv):
            if arg == flag and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    folders = [a for a in argv[1:] if not a.startswith("-") and Path(a).exists()]
    return folders[-1] if folders else None


class _Terminated(KeyboardInterrupt):
    """SIGTERM, taken down the same path as Ctrl-C (cancel, keep finished work)."""


_terminated = False


def _on_sigterm(signum, frame) -> None:
    global _terminated
    _terminated = True
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        # asyncio.run's own SIGINT handler: it cancels the running study cleanly.
        handler(signal.SIGINT, frame)
        return
    raise _Terminated()


def _interrupted(what: str) -> int:
    """The one line printed for Ctrl-C / SIGTERM, and the exit code (130 / 143)."""
    if _terminated:
        print(f"terminated: {what}", file=sys.stderr)
        return 143
    print(f"interrupted: {what}", file=sys.stderr)
    return 130


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _main(argv)
    except KeyboardInterrupt:  # outside the command's own handling (imports, Hydra setup)
        return _interrupted("stopped before it started; nothing was written")
    except BrokenPipeError:
        # The reader went away (`aces-bench --help | head`): nothing left to say, and the
        # interpreter's own flush at exit must not raise again on the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE


def _main(argv: list[str] | None = None) -> int:
    set_offline_defaults()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("usage", "commands"):
        print(_usage())
        return 0
    closing: list[str] = []
    is_eval = bool(argv) and argv[0] == "eval"
    if is_eval:
        try:
            argv, closing = _eval_argv(argv[1:])
        except AcesError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if not argv:
            return 0
    elif argv and argv[0] in SUBCOMMANDS:
        module_name, _ = SUBCOMMANDS[argv[0]]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                print(f"error: 'aces-bench {argv[0]}' is not available in this version", file=sys.stderr)
                return 2
            raise
        try:
            return int(module.main(argv[1:]) or 0)
        except AcesError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:  # a full disk or an unwritable output folder: one line, not a traceback
            error = output_error(exc, where=exc.filename or _output_arg(argv))
            if error is None:
                raise
            print(f"error: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            return _interrupted(f"aces-bench {argv[0]} stopped; files it writes are swapped in whole, "
                                "so the previous ones are intact")
    elif argv and (unknown := unknown_command(argv[0])) is not None:
        print(f"error: {unknown}", file=sys.stderr)
        return 2
    if argv and argv[0] == "run":
        argv = argv[1:]
    from aces_bench.study.console import exit_status, no_verdict_status, strip_verbose

    argv = strip_verbose(argv)
    from aces_bench.config.overrides import normalize

    argv = normalize(argv)
    if any(a in ("--help", "-h") for a in argv):
        try:
            print(_study_help([a for a in argv if not a.startswith("-")]))
        except AcesError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    sys.argv = [sys.argv[0] if sys.argv else "aces-bench", *argv]
    try:
        _run_hydra()
    except AcesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        return _interrupted("finished trials are kept; re-run the same command to resume")
    for line in closing:
        print(line, file=sys.stderr)
    status = exit_status()
    if is_eval and status == 0:
        return no_verdict_status()
    return status


def _eval_argv(args: list[str]) -> tuple[list[str], list[str]]:
    """``aces-bench eval ARGS`` as the study app's argv (empty after ``--help``), and the lines
    to print after the verdict table."""
    if not args or any(a in ("--help", "-h") for a in args):
        from aces_bench.datasets.evaluate import HELP

        print(HELP)
        if not args:
            raise RunError("no skill folder given", where="aces-bench eval", fix="name at least one folder")
        return [], []
    from aces_bench.datasets.evaluate import prepare_eval

    plan = prepare_eval(args)
    for line in plan.notes:
        print(line, file=sys.stderr)
    return plan.argv, plan.closing


def unknown_command(word: str) -> AcesError | None:
    """An error for a first word that is neither a command nor an override (None when it is one):
    an existing folder is pointed at ``eval``, a typo at the closest command."""
    import difflib

    if word.startswith(("-", "+", "~")) or "=" in word or word in ("run", "usage", "commands"):
        return None
    if Path(word).exists():
        return RunError("is a folder, not a command", where=word, fix=f"to evaluate it: aces-bench eval {word}")
    commands = ["run", *SUBCOMMANDS]
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return RunError(f"unknown command '{word}'", where="aces-bench",
                    fix=f"{hint}commands: {', '.join(commands)}; a study takes group=option overrides "
                        "(aces-bench usage)")


if __name__ == "__main__":
    sys.exit(main())
