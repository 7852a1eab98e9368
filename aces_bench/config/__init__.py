"""Hydra composition (``schema``/``store``) and the validated run spec (``spec``).

May import (pyproject's layers contract): ``backends``, ``agents``, ``judges`` and every
layer below them (``cases``, ``inputs``, ``verifier``, ``core``, ``conf``, ``examples``).
"""
