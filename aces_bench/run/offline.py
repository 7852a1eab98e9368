"""Environment defaults that keep a run offline, importable without Harbor or Hydra."""

from __future__ import annotations

import os

OFFLINE_ENV = {"HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def set_offline_defaults() -> None:
    """Harbor sends telemetry and litellm fetches a cost map unless told not to."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
