"""First-attempt pass is the first answer (AEVAL), on a real agent CLI's own trajectory.

The claude-code CLI from npm runs in the bubblewrap sandbox against the scripted
model server: the "model" writes a wrong total to the answer file with claude-code's
``Write`` tool, then corrects it with its ``Edit`` tool. Harbor converts what the CLI
did into ATIF; the graders read the writes from that trajectory. The verifier passes
the final answer; the first answer was wrong: first-attempt pass 0, final pass 1.
"""

from __future__ import annotations

import pytest
from support.model_server import ModelServer, Replay, call
from support.studies import needs_bwrap, read_table, retained_answer, study_overrides

from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir
from aces_bench.config.compose import compose_spec
from aces_bench.records.trials import read_grades
from aces_bench.study.entry import run_study

ANSWER = "/workspace/answer.txt"


def _wrong_then_right() -> Replay:
    return Replay(lambda r: [call("Write", file_path=ANSWER, content="total=999.00\n"),
                             call("Edit", file_path=ANSWER, old_string="999.00", new_string="141.75")],
                  final="The answer is in /workspace/answer.txt.")


@needs_bwrap
@pytest.mark.skipif(not (cli_dir(CLIS["claude-code"]) / MANIFEST).is_file(),
                    reason="claude-code is not in the agent cache: run `aces-bench agents install claude-code`")
def test_claude_code_wrong_then_right_answer_first_attempt_0_final_1(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    out = tmp_path / "out"
    with ModelServer(_wrong_then_right(), max_requests=40) as server:
        spec = compose_spec(["harness=claude-code", "model=openai-compatible",
                             "model.name=anthropic/claude-sonnet-4-5", f"model.base_url={server.url}",
                             "model.api_key_env=ANTHROPIC_API_KEY", *study_overrides(root_parent=tmp_path)],
                            output_dir=out)
        run_study(spec)
    assert server.errors == []
    table = read_table(out).set_index("condition")
    for condition in ("with_skill", "baseline"):
        row = table.loc[condition]
        assert row["status"] == "ok", row["failure_cause"]
        assert retained_answer(row["trial_dir"]) == "total=141.75"
        assert row["reward"] == 1.0 and row["final_pass"] == True  # noqa: E712 (numpy bool)
        assert row["first_attempt_pass"] == False  # noqa: E712
    graded = {g.condition: g for g in read_grades(out / "grades.jsonl")}
    section = graded["with_skill"].self_correction.details["self_correction"]
    assert section["first_answer"]["how"] == "Write (whole text)" and section["first_answer"]["content_known"]
    assert [c["how"] for c in section["later_changes"]] == ["Edit (edit)"]
    assert section["first_attempt_reward"] == 0.0
