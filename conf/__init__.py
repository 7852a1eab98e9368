"""The Hydra config groups, installed as ``aces_bench.conf`` (``conf/README.md`` documents every key).

May import (pyproject's layers contract): nothing (the bottom layer: YAML, no code).
"""
