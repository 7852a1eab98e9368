"""The order labels are shown in, shared by the statistics' tables and the report's figures."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

_DIGITS = re.compile(r"(\d+)")


def natural_key(value: Any) -> tuple:
    """Sort key that orders the digit runs of a label by value: ``pool-n5`` before ``pool-n10``."""
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return ((0, float(value), ""),)
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    return tuple((0, float(p), "") if p.isdigit() else (1, 0.0, p) for p in _DIGITS.split(text) if p)
