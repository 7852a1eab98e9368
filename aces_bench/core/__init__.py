"""The vocabulary every layer shares: the error family (``errors``), atomic writes and
bounded YAML (``io``), versioned records and their migrations (``versioning``), the
conditions of a paired study (``conditions``), the metric registry (``metrics``), the
grading modes and a status's trial class (``modes``), the gate's settings and verdicts
(``gate``), the outcome names (``outcomes``) and the order labels are shown in (``order``)
that the statistics and the report share, prices and token estimates (``pricing``),
credential masking and lookup (``masking``) and control characters made visible (``text``).

May import: nothing of aces_bench but ``aces_bench.__version__`` (the bottom layer).
"""
