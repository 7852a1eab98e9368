"""Strict answer checks (aces_bench/verifier/check_answer.py, docs/answer-checks.md): honest
answers the project did not write for them pass, floods and echoes of the input fail, and
the script refuses what a hostile agent can plant where the answer should be."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.examples import fallback_answer, run_usage, stage, target_suites

from aces_bench.cases import EvalCase
from aces_bench.judges.facts import Facts
from aces_bench.judges.heuristic import facts_consistent
from aces_bench.verifier.check_answer import evaluate_check, input_digests, numbers_in

ROOT = Path(__file__).resolve().parents[2]
CHECKER = ROOT / "aces_bench" / "verifier" / "check_answer.py"

FLOOD = " ".join(str(i) for i in range(2001))
POOL = ROOT / "aces_bench" / "examples" / "decoy-pool"


def _checks(case: EvalCase) -> list[dict]:
    return [c.as_checker_dict() for c in case.checks]


def _inputs(skill, case: EvalCase) -> tuple[list[str], list[str]]:
    texts = [case.prompt] + [(skill.path / f.src).read_text(errors="replace") for f in case.files]
    return texts, input_digests(texts)


def _honest(skill, case, tmp_path: Path) -> str:
    if case.is_negative_control:
        return fallback_answer(tmp_path, stage(skill, case, tmp_path))
    return run_usage(skill, case, tmp_path).stdout


CASES = [(s, c) for s, suite in target_suites() for c in suite.evals]


@pytest.mark.parametrize(("skill", "case"), CASES, ids=[f"{s.name}:{c.id}" for s, c in CASES])
def test_honest_answers_pass_strict_and_gaming_ones_do_not(skill, case, tmp_path):
    texts, inputs = _inputs(skill, case)
    honest = _honest(skill, case, tmp_path)
    assert [d for ok, d in (evaluate_check(c, honest, inputs) for c in _checks(case)) if not ok] == []
    echo = "\n".join(texts)
    for name, answer in (("flood", FLOOD), ("echo", echo), ("echo and flood", echo + "\n" + FLOOD),
                         ("echo and small numbers", echo + "\n" + " ".join(map(str, range(100))))):
        results = [evaluate_check(c, answer, inputs) for c in _checks(case)]
        assert not all(ok for ok, _ in results), f"{name} passed every check of {case.id}"
        # Each of those passes under the lenient rule wherever the number or text is somewhere in it.
        lenient = [evaluate_check({**c, "match": "lenient"}, answer, inputs)[0] for c in _checks(case)]
        if name == "flood" and all(c["kind"] == "number" and float(c["value"]).is_integer() for c in _checks(case)):
            assert all(lenient), f"the lenient rule should be fooled by {name}"


def _pool_outputs() -> list[tuple[str, str]]:
    out = []
    for d in sorted(p for p in POOL.iterdir() if p.is_dir()):
        body = (d / "SKILL.md").read_text()
        m = re.search(r"Sample input is in `samples/`: `([^`]+)`", body)
        cmd = m.group(1).replace("python3", "/usr/bin/python3", 1)
        done = subprocess.run(cmd, shell=True, cwd=d, capture_output=True, text=True, timeout=30,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        out.append((d.name, done.stdout))
    return out


def test_real_outputs_of_the_decoy_pool_scripts_with_every_number_as_the_asked_quantity():
    # 46 real script outputs the rule was not written from: count how many honest
    # numbers the strict rule without a label refuses (docs/answer-checks.md states it).
    outputs = _pool_outputs()
    assert len(outputs) == 46
    n = fail = 0
    failing_skills = set()
    for name, text in outputs:
        for v in sorted(set(numbers_in(text))):
            n += 1
            if not evaluate_check({"kind": "number", "value": v, "tolerance": 0}, text)[0]:
                fail += 1
                failing_skills.add(name)
    assert (fail, n) == (9, 230)
    # Those are outputs that offer values as alternatives or ranges ("10 or 13 digits", "hour
    # 1-5", "out of range 1-3999") or list same-size values of one kind (an RGB triple):
    # there the case must name its quantity with a label.
    assert failing_skills == {"color-converter", "cron-explain", "isbn-validator", "roman-numerals"}
    assert evaluate_check({"kind": "number", "value": 6142.13, "tolerance": 0.005, "label": "year  2:"},
                          dict(outputs)["compound-interest"])[0]


@pytest.mark.parametrize(("text", "label", "value", "ok"), [
    ("monthly payment: 4660.75\nyear 1: balance 204387.82", "monthly payment", 4660.75, True),
    ("Difference (ledger - bank): 1,400.07", "difference", 1400.07, True),
    ("p95 1746 ms, p99 2004", "p95", 1746, True),
    ("The total is 42.", "total", 42, True),
    ("BANK FEE -35.00", "bank fee", -35, True),
    ("total: 1 total: 2 total: 3", "total", 2, False),
    ("the answer is 42", "total", 42, False),
])
def test_a_label_names_the_one_stated_result(text, label, value, ok):
    assert evaluate_check({"kind": "number", "value": value, "tolerance": 0.01, "label": label}, text)[0] is ok


def test_numbers_are_read_as_written():
    assert numbers_in("INV-1018 p95 x264 v2.3.1 fee -35.00 total 1,400.07") == [-35.0, 1400.07]


def test_text_checks_refuse_lists_of_candidates_and_long_answers():
    versions = " ".join(f"{a}.{b}.{c}" for a in range(4) for b in range(10) for c in range(2))
    assert not evaluate_check({"kind": "contains", "value": "3.0.0"}, versions)[0]
    assert evaluate_check({"kind": "contains", "value": "3.0.0"}, "Next version: 3.0.0 (was v2.3.1)")[0]
    ids = " ".join(f"INV-{i}" for i in range(1000, 1100))
    assert not evaluate_check({"kind": "contains", "value": "INV-1018"}, ids)[0]
    assert not evaluate_check({"kind": "regex", "value": r"\d+\.\d+\.\d+"}, versions)[0]
    long = "The answer is pyqt5. " + "lorem ipsum " * 400
    ok, why = evaluate_check({"kind": "contains", "value": "pyqt5"}, long)
    assert not ok and "over the 4000 a strict check reads" in why
    assert evaluate_check({"kind": "contains", "value": "pyqt5", "max_chars": 10000}, long)[0]
    assert evaluate_check({"kind": "contains", "value": "pyqt5", "match": "lenient"}, long)[0]


def test_the_checker_refuses_links_fifos_and_huge_answers(tmp_path):
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir()
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"id": "c", "checks": [{"kind": "contains", "value": "1400.07", "match": "lenient"}]}))

    def run() -> dict:
        subprocess.run([sys.executable, str(CHECKER), str(case), str(ws), str(logs)], check=True, timeout=30)
        return json.loads((logs / "details.json").read_text())

    # A link to the verifier's own case file (which holds the expected value) is no answer.
    (ws / "answer.txt").symlink_to(case)
    assert run()["checks"][0]["detail"] == "answer file missing"
    (ws / "answer.txt").unlink()
    os.mkfifo(ws / "answer.txt")  # would block a plain open() forever
    assert run()["reward"] == 0.0
    (ws / "answer.txt").unlink()
    (ws / "answer.txt").write_text("1400.07")
    assert run()["reward"] == 1.0


def test_the_verifier_reads_the_input_digests_the_emitter_writes(tmp_path):
    texts = ["Sum the amount column.", "id,amount\n" + "\n".join(f"{i},{i * 3}.25" for i in range(40))]
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"id": "c", "input_words": input_digests(texts),
                                "checks": [{"kind": "contains", "value": "amount"}]}))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "answer.txt").write_text("\n".join(texts))
    subprocess.run([sys.executable, str(CHECKER), str(case), str(ws), str(tmp_path / "l")], check=True, timeout=30)
    detail = json.loads((tmp_path / "l" / "details.json").read_text())["checks"][0]["detail"]
    assert detail.startswith("the answer is a dump of the input")


def test_the_heuristic_judge_abstains_on_a_flood_of_ground_truth_candidates():
    facts = Facts(condition="with_skill", expected_skill="s", acceptable_skills=[], expected_script=None,
                  expected_output="checksum=246", checks=[], activations=[], script_runs=[], tool_calls=0,
                  final_answer_source="answer file")
    assert facts_consistent(facts, "checksum=246").answer == "yes"
    flood = facts_consistent(facts, " ".join(str(i) for i in range(300)))
    assert flood.answer is None and "a list of candidates" in flood.reason
    assert facts_consistent(facts, "checksum=246 " + "x" * 5000).answer is None


@pytest.mark.shared
def test_real_skillsbench_answers_agree_with_their_own_verifier(shared_dir):
    # gemini-cli's final answers where a number is asked; the task's verifier rewarded the
    # no-skills answers and failed the skills ones.
    base = shared_dir / "data" / "skillsbench" / "trials"
    checks = {"3d-scan-calc": {"kind": "number", "value": 34648.04, "tolerance": 0.5},
              "econ-detrending-correlation": {"kind": "number", "value": 0.68885, "tolerance": 0.0005}}
    for task, check in checks.items():
        for condition in ("noskills", "skills"):
            steps = json.loads((base / condition / task / "agent" / "trajectory.json").read_text())["steps"]
            answer = [s["message"] for s in steps if s["source"] == "agent" and s.get("message")][-1]
            reward = json.loads((base / condition / task / "result.json").read_text())["verifier_result"]["rewards"]
            assert evaluate_check(check, answer)[0] is (reward["reward"] == 1.0), (task, condition)


def test_a_long_answer_is_judged_on_its_final_number_alone():
    # A chatty script's whole stdout as the answer (the reference agent keeps its head and tail):
    # one final number is no list of candidates; a flood ending in another number is not read.
    chatty = "progress " * 8000 + "\ntotal=141.75\n"
    ok, why = evaluate_check({"kind": "number", "value": 141.75, "tolerance": 0.001}, chatty)
    assert ok and why.startswith("the answer's final number is 141.75")
    assert not evaluate_check({"kind": "number", "value": 141.75, "tolerance": 0.001}, chatty + FLOOD)[0]
    assert not evaluate_check({"kind": "contains", "value": "141.75"}, chatty)[0]  # text checks read a bounded answer


def _doc_rows() -> list[tuple[str, dict, bool]]:
    """The hedge table of docs/answer-checks.md: (answer, check, passes)."""
    doc = (ROOT / "docs" / "answer-checks.md").read_text()
    rows = []
    for line in doc.splitlines():
        m = re.fullmatch(r"\| `(.+)` \| (number|contains|regex) (\S+)(?: label (.+))? \| (yes|no) \|", line)
        if m:
            answer = m.group(1).replace("\\n", "\n").replace("\\|", "|")
            check = {"kind": m.group(2), "value": float(m.group(3)) if m.group(2) == "number" else m.group(3)}
            if m.group(4):
                check["label"] = m.group(4)
            rows.append((answer, check, m.group(5) == "yes"))
    return rows


DOC_ROWS = _doc_rows()


def test_the_hedge_table_is_read_whole():
    assert len(DOC_ROWS) == 60 and sum(ok for *_, ok in DOC_ROWS) == 21


@pytest.mark.parametrize(("answer", "check", "passes"), DOC_ROWS, ids=[f"{r[0][:40]!r}-{r[1]['kind']}" for r in DOC_ROWS])
def test_every_row_of_the_documented_hedge_table(answer, check, passes):
    ok, why = evaluate_check(check, answer)
    assert ok is passes, why
    if not passes and "label" not in check and check["kind"] == "number":
        assert "alternative" in why or "states no number" in why


def test_a_label_is_never_weaker_than_no_label():
    # Issue 33: the label branch read the first number after the label and never counted rivals.
    for c in (40, 1400.07, 0.68885):
        hedge = f"total: {c - 2:g} or {c:g} or {c + 2:g} or {c + 4:g}"
        for check in ({"kind": "number", "value": c, "tolerance": 0}, {"kind": "number", "value": c, "label": "total"}):
            assert not evaluate_check(check, hedge)[0], (hedge, check)
        assert not evaluate_check({"kind": "number", "value": c, "label": "total"}, f"total: {c:g} or {c + 2:g}")[0]


def test_hedges_a_skill_could_write_to_game_the_checks(tmp_path):
    c = {"kind": "number", "value": 42, "tolerance": 0}
    for hedge in ("It is maybe 42, possibly 44.", "42 — or, if the header row counts, 43", "42 (or perhaps 41)",
                  "answer:\n42\n\nor\n\n44", "Either\n42\nor 44", "42 ±2", "41–43",
                  "somewhere between 40 and 44, most likely 42"):
        assert not evaluate_check(c, hedge)[0], hedge
    labelled = {**c, "label": "total"}
    for hedge in ("| total | 42 | \n| total | 44 |", "total = 42\n...\ntotal = 44", "total: 42 or 43",
                  "Total: 42.\nTotal (alternative reading): 44."):
        assert not evaluate_check(labelled, hedge)[0], hedge
    # Hedging in a file the check reads (a check's "file"), through the checker script itself.
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir()
    (ws / "answer.txt").write_text("see report.md")
    (ws / "report.md").write_text("## Result\n\n| total | 42 or 44 |\n")
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"id": "c", "checks": [{"kind": "number", "value": 42, "file": "report.md"},
                                                      {"kind": "contains", "value": "42", "file": "report.md"}]}))
    subprocess.run([sys.executable, str(CHECKER), str(case), str(ws), str(logs)], check=True, timeout=30)
    details = json.loads((logs / "details.json").read_text())
    assert details["reward"] == 0.0 and all("alternative" in r["detail"] for r in details["checks"])
    (ws / "report.md").write_text("## Result\n\n| total | 42 |\n| count | 7 |\n")
    subprocess.run([sys.executable, str(CHECKER), str(case), str(ws), str(logs)], check=True, timeout=30)
    assert json.loads((logs / "details.json").read_text())["reward"] == 1.0


def test_max_candidates_allows_that_many_alternatives():
    check = {"kind": "number", "value": 1746, "tolerance": 1}
    assert not evaluate_check(check, "1746 or 1750")[0]
    assert evaluate_check({**check, "max_candidates": 1}, "1746 or 1750")[0]
    assert not evaluate_check({**check, "max_candidates": 1}, "1740, 1746 or 1750")[0]
    assert evaluate_check({**check, "max_candidates": 0}, "p95: 1746 ms")[0]


def _final_answers(paths) -> dict[str, str]:
    out = {}
    for path in paths:
        if path.suffix == ".jsonl":
            for i, line in enumerate(path.read_text().splitlines()):
                answer = json.loads(line).get("final_answer") if line.strip().startswith("{") else None
                if answer:
                    out[f"{path.name}:{i}"] = answer
            continue
        data = json.loads(path.read_text())
        steps = data.get("steps") if isinstance(data, dict) else None
        if not isinstance(steps, list):
            continue
        said = [s["message"] for s in steps if isinstance(s, dict) and s.get("source") == "agent" and isinstance(s.get("message"), str)
                and s["message"].strip()]
        if said:
            out[str(path)] = said[-1]
    return out


def _every_value_as_asked(answers: dict[str, str]) -> tuple[int, list[tuple[str, str]]]:
    """Each number and each digit-bearing id of each answer taken in turn as the asked
    quantity (no label): how many checks, and the ones the strict rule fails."""
    n, failed = 0, []
    for name, text in answers.items():
        checks = [{"kind": "number", "value": v, "tolerance": 0} for v in sorted(set(numbers_in(text)))]
        checks += [{"kind": "contains", "value": t}
                   for t in sorted(set(re.findall(r"(?<![\w.])[A-Za-z]+[-_]?\d+[\w.-]*", text)))]
        for check in checks:
            n += 1
            if not evaluate_check(check, text)[0]:
                failed.append((name, str(check["value"])))
    return n, failed


def test_the_projects_recorded_real_answers_state_every_value_once():
    # The golden grades' answers and the recorded agent trajectories (claude-code, codex,
    # gemini-cli, terminus-2, the reference agent): real answers the hedge rule was not
    # written from. Every value in them, taken as the asked quantity, passes.
    tests = ROOT / "tests"
    paths = (sorted((tests / "golden").rglob("*.jsonl")) + sorted((tests / "golden" / "real_grades").rglob("*.json"))
             + sorted((tests / "fixtures").rglob("*.json")) + sorted(tests.rglob("trajectory.json")))
    answers = _final_answers(paths)
    # Each distinct answer once: goldens copy answers (the study-record golden copies two),
    # and a copy checks nothing new.
    n, failed = _every_value_as_asked({text: text for text in set(answers.values())})
    assert len(set(answers.values())) == 13 and n == 74
    assert failed == []


@pytest.mark.shared
def test_skillsbench_final_answers_with_every_number_as_the_asked_quantity(shared_dir):
    # The 16 real SkillsBench trials: their asked numbers agree with their own verifier (the
    # test above); every other number, taken as the asked one, passes too except the years
    # of a stated period ("1973–2024"), which is a range.
    answers = _final_answers(sorted((shared_dir / "data" / "skillsbench" / "trials").glob("*/*/agent/trajectory.json")))
    assert len(answers) == 16
    n, failed = _every_value_as_asked(answers)
    numbers = [v for _, v in failed]
    assert n == 98 and sorted(numbers) == ["1973.0", "1973.0", "2023.0", "2024.0", "2024.0"]
    assert all("econ-detrending-correlation" in name for name, _ in failed)


@pytest.mark.parametrize(("name", "text", "passes"), [
    ("report.json", '{"rows": 8, "total": 169.8}', True),
    ("report.json", "[]", False),  # parses, holds nothing
    ("report.json", "{}", False),
    ("report.json", '{"rows": 8,', False),  # starts like JSON, is not
    ("report.json", "   \n", False),
    ("rows.jsonl", '{"a": 1}\n{"a": 2}\n', True),
    ("rows.jsonl", '{"a": 1}\n{"a": \n', False),
    ("table.csv", "date,amount\n2024-03-01,19.50\n", True),
    ("table.csv", "date,amount\n", False),  # a header alone is no table
    ("table.csv", "date,amount\n2024-03-01\n", False),  # a row narrower than the header
    ("table.tsv", "date\tamount\n2024-03-01\t19.50\n", True),
    ("figure.pdf", "%PDF-1.7\n...", True),
    ("figure.pdf", "not a pdf", False),
    ("notes.md", "# Summary\n", True),
    ("notes.md", "", False),
])
def test_a_written_check_wants_a_well_formed_file(name, text, passes):
    check = {"kind": "written", "value": "*", "file": "out"}
    assert evaluate_check(check, {f"out/{name}": text})[0] is passes


def test_a_written_check_on_a_folder_wants_one_good_file_matching_its_glob():
    check = {"kind": "written", "value": "*.csv", "file": "out"}
    assert not evaluate_check(check, {"out/a.json": '{"x": 1}'})[0]  # nothing of the asked type
    assert evaluate_check(check, {"out/empty.csv": "", "out/sub/t.csv": "a,b\n1,2\n"})[0]
    assert not evaluate_check(check, None)[0]
    assert "nothing written" in evaluate_check(check, None)[1]
    # A string (the host's single-file readers) is the one file named.
    assert evaluate_check({"kind": "written", "value": "r.json", "file": "out/r.json"}, '{"x": 1}')[0]


def test_the_checker_refuses_what_a_hostile_agent_plants_for_a_written_check(tmp_path):
    """An empty file, a link to a good file, a linked folder, a FIFO and a device are nothing written;
    the check passes only on a regular, well formed file inside the folder it names."""
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    (ws / "out").mkdir(parents=True)
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"id": "c", "checks": [{"kind": "written", "value": "*", "file": "out"}]}))
    good = tmp_path / "good.json"  # outside the workspace
    good.write_text('{"rows": 8}')

    def run() -> dict:
        subprocess.run([sys.executable, str(CHECKER), str(case), str(ws), str(logs)], check=True, timeout=30)
        return json.loads((logs / "details.json").read_text())

    assert run()["reward"] == 0.0  # an empty folder
    (ws / "out" / "empty.json").write_text("")
    (ws / "out" / "link.json").symlink_to(good)  # a link to a well formed file is not a file written
    os.mkfifo(ws / "out" / "pipe.json")  # would block a plain open() forever
    (ws / "out" / "null.json").symlink_to("/dev/null")
    (ws / "out" / "elsewhere").symlink_to(tmp_path, target_is_directory=True)  # a linked folder is not walked
    detail = run()
    assert detail["reward"] == 0.0, detail
    (ws / "linked").symlink_to(ws / "out" / "elsewhere", target_is_directory=True)
    case.write_text(json.dumps({"id": "c", "checks": [{"kind": "written", "value": "*", "file": "linked"}]}))
    assert run()["checks"][0]["detail"].startswith("nothing written")  # the named folder itself a link
    case.write_text(json.dumps({"id": "c", "checks": [{"kind": "written", "value": "*", "file": "out"}]}))
    (ws / "out" / "real.json").write_text('{"rows": 8}')
    assert run()["reward"] == 1.0


def test_a_written_check_names_what_it_reads():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="names the file or folder"):
        EvalCase.model_validate({"id": "c", "prompt": "p", "assertions": [{"kind": "written", "value": "*"}]})
