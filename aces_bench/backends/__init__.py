"""Execution backends. The local bubblewrap sandbox is ``backends/local.py``.

Only names live here: the config layer reads ``LOCAL_BACKEND`` without loading the
sandbox (bwrap, Harbor's environment classes); ``backends.local.IMPORT_PATH`` is it.
"""

LOCAL_BACKEND = "aces_bench.backends.local:LocalSandboxEnvironment"
