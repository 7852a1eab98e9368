"""spec.json, the study record's spec part: the composed spec, with its secrets masked."""

from __future__ import annotations

import json

from aces_bench.config.compose import compose_spec
from aces_bench.emitters.plan import StudyPlan
from aces_bench.records.study import SPEC_FILE, ResolvedSpec, read_study
from aces_bench.study.provenance import build_provenance, masked_spec, record_run

KEY = "ACES_TEST_SPEC_KEY"
VALUE = "k7-not-a-real-key-but-long-enough"


def _spec_with_secrets(tmp_path):
    spec = compose_spec(["harness=terminus-2", "model=openai-compatible", "model.name=openai/a",
                         "model.base_url=http://127.0.0.1:9/v1", f"model.api_key_env={KEY}"],
                        output_dir=tmp_path / "out")
    # A credential's value pasted into the harness's environment, and a provider key in a URL.
    harness = spec.harness.model_copy(update={"env": {"EXTRA_AUTH": f"Bearer {VALUE}",
                                                      "PROXY": "sk-ant-api03-" + "a" * 90}})
    return spec.model_copy(update={"harness": harness})


def test_the_spec_part_masks_named_credentials_and_secret_like_strings(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY, VALUE)
    spec = _spec_with_secrets(tmp_path)
    out = tmp_path / "out"
    record_run(out, spec, StudyPlan(targets=(), support=(), decoys=(), tasks=()), None)
    text = (out / SPEC_FILE).read_text()
    assert VALUE not in text and "sk-ant-api03-aaaa" not in text
    stored = ResolvedSpec.model_validate_json(text).spec
    assert stored["harness"]["env"]["EXTRA_AUTH"] == f"Bearer [REDACTED:credential {KEY}]"
    assert stored["harness"]["env"]["PROXY"].startswith("[REDACTED:")
    assert stored["model"]["api_key_env"] == KEY  # the name stays: it says where the key came from
    # Everything else is the spec as it was composed.
    assert {k: v for k, v in stored.items() if k != "harness"} == \
        {k: v for k, v in json.loads(spec.model_dump_json()).items() if k != "harness"}
    part = read_study(out).part("spec")
    assert (part.file, part.artifact, part.stage) == (SPEC_FILE, "resolved spec", "study")


def test_the_provenance_holds_the_same_masked_spec(tmp_path, monkeypatch):
    # provenance.json carried the spec unmasked beside a masked spec.json: a key pasted
    # into harness.env was written in clear one file over.
    monkeypatch.setenv(KEY, VALUE)
    spec = _spec_with_secrets(tmp_path)
    provenance = build_provenance(spec, [])
    assert VALUE not in provenance.model_dump_json() and "sk-ant-api03-aaaa" not in provenance.model_dump_json()
    assert provenance.spec == masked_spec(spec)


def test_an_unset_credential_leaves_the_spec_as_composed(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY, raising=False)
    spec = compose_spec(["harness=terminus-2", "model=openai-compatible", "model.name=openai/a",
                         "model.base_url=http://127.0.0.1:9/v1", f"model.api_key_env={KEY}"],
                        output_dir=tmp_path / "out")
    assert masked_spec(spec) == json.loads(spec.model_dump_json())
