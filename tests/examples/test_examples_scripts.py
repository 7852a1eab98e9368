"""The example scripts compute the right thing on small hand-checked inputs, the decoys
work on their samples, and every script refuses bad input with a clear message."""

from __future__ import annotations

import json

import pytest
from support.examples import SANDBOX_PYTHON, examples_root, run_script

TARGETS = examples_root() / "skills"
DECOYS = examples_root() / "decoys"


def run(script, *args, cwd):
    return run_script([SANDBOX_PYTHON, str(script), *map(str, args)], cwd=cwd)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- targets on hand-checked inputs -------------------------------------------------


def test_reconcile_reference_amount_and_fee_rules(tmp_path):
    ledger = write(tmp_path, "l.csv", "invoice_id,amount\nINV-1,100.00\nINV-2,50.00\nINV-3,\"1,020.00\"\n")
    bank = write(
        tmp_path, "b.csv",
        "date,description,amount\n2024-01-02,pay INV-1,$100.00\n2024-01-03,WIRE INV 2,45.00\n"
        "2024-01-04,ACH CREDIT,1020.00\n2024-01-05,BANK FEE,(5.00)\n",
    )
    proc = run(TARGETS / "invoice-reconciler/scripts/reconcile.py", ledger, bank, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Difference (ledger - bank): 10.00" in out  # 1170.00 - 1160.00
    assert "Matched: 2" in out  # INV-1 by reference, INV-3 by unique amount
    assert "INV-2 ledger 50.00 bank 45.00 (diff 5.00)" in out
    assert "Unmatched ledger entries (0)" in out
    assert "'BANK FEE' -5.00" in out


def test_latency_nearest_rank_and_path_grouping(tmp_path):
    lines = [
        f'10.0.0.1 - - [01/Jan/2024:00:00:{i:02d} +0000] "GET /a/{i}?x=1 HTTP/1.1" 200 10 "-" "t" 0.{i:03d}'
        for i in range(1, 21)
    ]
    lines.append('10.0.0.1 - - [01/Jan/2024:00:01:00 +0000] "POST /b HTTP/1.1" 201 10 "-" "t" rt=0.500')
    log = write(tmp_path, "access.log", "\n".join(lines) + "\n")
    proc = run(TARGETS / "access-log-latency/scripts/latency.py", log, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    row = next(line.split() for line in proc.stdout.splitlines() if line.startswith("GET /a/{id}"))
    # 20 samples 1..20 ms: p50 = 10th, p95 = 19th, p99 = 20th value.
    assert row[2:8] == ["20", "10", "19", "20", "20", "0"]
    assert "Slowest endpoint by p95: POST /b (p95 500 ms" in proc.stdout


@pytest.mark.parametrize(
    "log,expected",
    [
        ("b2c3d4e (HEAD -> main) feat(x)!: drop y\na1b2c3d (tag: v0.3.4) chore: release\n", "Next version: 0.4.0"),
        ("b2c3d4e fix: z\nc3d4e5f docs: w\na1b2c3d (tag: v1.2.3) chore: release\n", "Next version: 1.2.4"),
        ("b2c3d4e docs: w\na1b2c3d (tag: v1.2.3, origin/main) chore: r\nd4e5f6a feat!: old\n", "Next version: none"),
        ("b2c3d4e feat: q\nc3d4e5f fix: z\na1b2c3d (tag: v1.2.3) chore: release\n", "Next version: 1.3.0"),
        ("b2c3d4e refactor: BREAKING CHANGE: api\na1b2c3d (tag: v1.2.3) chore: r\n", "Next version: 2.0.0"),
    ],
)
def test_next_version_rules(tmp_path, log, expected):
    path = write(tmp_path, "commits.log", log)
    proc = run(TARGETS / "semver-bump/scripts/next_version.py", path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert expected in proc.stdout


def test_license_expressions_and_exceptions(tmp_path):
    packages = [
        {"Name": "dual", "Version": "1", "License": "MIT OR GPL-3.0-or-later"},
        {"Name": "both", "Version": "1", "License": "MIT AND GPL-3.0-only"},
        {"Name": "classifiers", "Version": "1", "License": "Apache Software License; GNU General Public License v3 (GPLv3)"},
        {"Name": "blank", "Version": "1", "License": ""},
        {"Name": "lesser", "Version": "1", "License": "LGPL-2.1-or-later"},
        {"Name": "waived", "Version": "1", "License": "GPLv2"},
    ]
    policy = {"allow": ["MIT", "Apache-2.0"], "review": ["LGPL-2.1"], "deny": ["GPL-2.0", "GPL-3.0"],
              "exceptions": {"waived": "LEGAL-1"}}
    pk = write(tmp_path, "p.json", json.dumps(packages))
    po = write(tmp_path, "policy.json", json.dumps(policy))
    proc = run(TARGETS / "license-audit/scripts/audit_licenses.py", pk, po, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Allowed: 2  Excepted: 1  Needs review: 1  Unknown: 1  Denied: 1" in out
    assert "both 1  GPL-3.0" in out and "blank 1  UNKNOWN" in out and "reason: LEGAL-1" in out
    assert "Verdict: FAIL (2 violations: 1 denied, 1 unknown)" in out


# --- decoys on their samples --------------------------------------------------------


def test_api_debugger_samples(tmp_path):
    script = DECOYS / "api-debugger/scripts/diagnose.py"
    expired = run(script, DECOYS / "api-debugger/samples/expired-token.http", cwd=tmp_path)
    assert expired.returncode == 0 and "Status: 401" in expired.stdout and "invalid_token" in expired.stdout
    ctype = run(script, DECOYS / "api-debugger/samples/wrong-content-type.http", cwd=tmp_path)
    assert "Likely cause: request body is JSON but Content-Type is 'text/plain'" in ctype.stdout
    assert "CORS" in ctype.stdout


def test_log_triage_sample(tmp_path):
    proc = run(DECOYS / "log-triage/scripts/triage.py", DECOYS / "log-triage/samples/app.log", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "at ERROR or above: 5, distinct signatures: 3" in proc.stdout
    assert " 1. x3    payment <n> failed: gateway timeout after <n>" in proc.stdout
    assert "psycopg2.OperationalError: connection refused" in proc.stdout


def test_config_validator_samples(tmp_path):
    script, samples = DECOYS / "config-validator/scripts/validate.py", DECOYS / "config-validator/samples"
    bad = run(script, samples / "service.yaml", samples / "service.schema.json", cwd=tmp_path)
    assert bad.returncode == 1
    assert "INVALID: 5 problem(s)" in bad.stdout
    assert "database.pool_sise: unknown key (did you mean 'pool_size'?)" in bad.stdout
    assert "port: 80800 must be <= 65535" in bad.stdout
    good = run(script, samples / "service-ok.yaml", samples / "service.schema.json", cwd=tmp_path)
    assert good.returncode == 0 and good.stdout.startswith("VALID")


def test_release_planner_sample(tmp_path):
    proc = run(DECOYS / "release-planner/scripts/plan.py", DECOYS / "release-planner/samples/tickets.csv",
               "--capacity", "13", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    ids = [line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  PAY-")]
    # Dependencies first, then priority: P0s lead, PAY-103 follows PAY-101, PAY-106 comes last of its chain.
    assert ids == ["PAY-105", "PAY-102", "PAY-101", "PAY-103", "PAY-104", "PAY-106", "PAY-107"]
    assert "-> 3 releases" in proc.stdout


# --- bad input ----------------------------------------------------------------------

BAD_INPUTS = [
    ("skills/invoice-reconciler/scripts/reconcile.py", {"l.csv": "id,total\n1,2\n", "b.csv": "amount\n1\n"}, "no invoice id column"),
    ("skills/invoice-reconciler/scripts/reconcile.py", {"l.csv": "invoice_id,amount\nINV-1,abc\n", "b.csv": "amount\n1\n"}, "amount 'abc' is not a number"),
    ("skills/access-log-latency/scripts/latency.py", {"notes.txt": "hello\nworld\n"}, "no access-log lines with a request time"),
    ("skills/semver-bump/scripts/next_version.py", {"c.log": "a1b2c3d feat: x\n"}, "no release tag"),
    ("skills/semver-bump/scripts/next_version.py", {"c.log": "not a commit line\n"}, "not a 'git log --oneline --decorate' line"),
    ("skills/license-audit/scripts/audit_licenses.py", {"p.csv": "pkg,lic\na,MIT\n", "po.json": '{"allow": []}'}, "CSV needs 'name' and 'license' columns"),
    ("skills/license-audit/scripts/audit_licenses.py", {"p.csv": "name,license\na,MIT\n", "po.json": '{"allow": [], "denied": []}'}, "unknown policy key(s) ['denied']"),
    ("decoys/api-debugger/scripts/diagnose.py", {"x.http": "GET / HTTP/1.1\nHost: a\n"}, "no response found"),
    ("decoys/log-triage/scripts/triage.py", {"x.log": "just text\n"}, "no timestamped log entries found"),
    ("decoys/config-validator/scripts/validate.py", {"c.yaml": "a:\n\tb: 1\n", "s.json": "{}"}, "tab used for indentation"),
    ("decoys/config-validator/scripts/validate.py", {"c.json": "{}", "s.json": "{nope"}, "schema is not valid JSON"),
    ("decoys/release-planner/scripts/plan.py", {"t.csv": "id,title,priority,points,depends_on\nA,a,P1,1,B\nB,b,P1,1,A\n"}, "dependency cycle: A -> B -> A"),
    ("decoys/release-planner/scripts/plan.py", {"t.csv": "id,title,priority,points\nA,a,high,1\n"}, "priority 'high' must be P0, P1, P2 or P3"),
]


@pytest.mark.parametrize("script,files,message", BAD_INPUTS, ids=[m for _, _, m in BAD_INPUTS])
def test_bad_input_is_refused_clearly(tmp_path, script, files, message):
    paths = [write(tmp_path, name, text) for name, text in files.items()]
    proc = run(examples_root() / script, *paths, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


SCRIPTS = sorted(str(p.relative_to(examples_root())) for p in examples_root().glob("*/*/scripts/*.py")
                 if "__main__" in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_missing_file_and_wrong_arity(tmp_path, script):
    path = examples_root() / script
    nargs = 2 if path.name in ("reconcile.py", "audit_licenses.py", "validate.py") else 1
    missing = run(path, *[tmp_path / f"absent{i}.txt" for i in range(nargs)], cwd=tmp_path)
    assert missing.returncode == 2 and "file not found" in missing.stderr and "absent0.txt" in missing.stderr
    assert "Traceback" not in missing.stderr
    arity = run(path, cwd=tmp_path)
    assert arity.returncode == 2 and arity.stderr.startswith("usage: ")
