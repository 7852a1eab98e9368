"""The in-sandbox verifier (``check_answer``): a case's deterministic checks applied to
the answer file. It is copied into each task's ``tests/`` and runs there with only the
standard library, so it imports nothing of aces-bench at run time.

May import (pyproject's layers contract): ``core``, ``conf`` and ``examples`` (the bottom
layer); nothing above.
"""
