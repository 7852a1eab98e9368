"""Example data shipped with the package: the demo skills (``skills/``) and decoy pools
(``decoys/``, ``decoy-pool/``), which configs name through ``${aces_examples:...}``.

May import (pyproject's layers contract): nothing (the bottom layer: data, no code).
"""
