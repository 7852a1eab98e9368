"""The vocabulary every layer shares: the error family (``errors``), atomic writes and
bounded YAML (``io``), versioned records and their migrations (``versioning``), the
conditions of a paired study (``conditions``), the metric registry (``metrics``), the
grading modes (``modes``), the gate's settings (``gate``), prices and token estimates (``pricing``), credential
masking (``masking``) and control characters made visible (``text``).

May import: nothing of aces_bench but ``aces_bench.__version__`` (the bottom layer).
"""
