"""A real-provider smoke test; runs only with ``-m live_llm`` and a key in the environment.

Set ACES_LIVE_JUDGE_MODEL (a litellm model string) and ACES_LIVE_JUDGE_KEY_ENV (the
name of the env var holding its key, e.g. OPENAI_API_KEY).
"""

from __future__ import annotations

import asyncio
import os

import pytest
from support.judges import good_run, grading_input

from aces_bench.graders.judged import grade_judged
from aces_bench.judges.factory import build_judge
from aces_bench.judges.spec import JudgeSpec


@pytest.mark.live_llm
def test_real_provider_grades_a_good_run(tmp_path):
    model, key_env = (
        os.environ.get("ACES_LIVE_JUDGE_MODEL"),
        os.environ.get("ACES_LIVE_JUDGE_KEY_ENV"),
    )
    if not model or not key_env or not os.environ.get(key_env):
        pytest.skip(
            "set ACES_LIVE_JUDGE_MODEL and ACES_LIVE_JUDGE_KEY_ENV (naming a set key) to run"
        )
    judge = build_judge(
        JudgeSpec(
            kind="litellm", model=model, api_key_env=key_env, cache_dir=str(tmp_path)
        )
    )
    results = asyncio.run(grade_judged(grading_input(good_run()), judge))
    assert all(r.scored for r in results.values()), {
        k: r.unscored_reason for k, r in results.items()
    }
    assert results["accuracy"].score >= 0.6
