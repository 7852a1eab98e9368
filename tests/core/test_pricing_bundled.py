"""The price read from litellm's bundled cost map before litellm is imported is the price
``litellm.model_cost`` gives, for every model (the fast path a cost-cap refusal takes)."""

from __future__ import annotations

import subprocess
import sys

from aces_bench.core import pricing

CODE = """
import json, os, sys
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
from aces_bench.core import pricing
bundled = pricing._bundled_map()
listed = sorted(k for k, v in bundled.items() if isinstance(v, dict) and v.get("input_cost_per_token") is not None)
first = pricing.price_of("openai/gpt-4o")
no_import = "litellm" not in sys.modules
import litellm
bad = [n for n in listed if pricing._entry_price(n, bundled[n]) != pricing._entry_price(n, litellm.model_cost.get(n))]
print(json.dumps({"n": len(listed), "bad": bad[:10], "no_import": no_import,
                  "same": first == pricing.price_of("openai/gpt-4o")}))
"""


def test_every_model_of_the_bundled_map_prices_as_litellm_prices_it():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300, check=True)
    import json

    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["bad"] == [], result
    assert result["n"] > 1000 and result["no_import"] and result["same"], result


def test_the_bundled_map_is_not_read_when_litellm_fetches_the_current_one(monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "False")
    assert pricing._bundled_map() is None
