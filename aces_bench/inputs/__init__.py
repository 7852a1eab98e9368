"""What a study reads that its operator did not write: skill folders (``skills``, through
the one symlink-refusing walk ``skilltree``), files a trial wrote (``trialfiles``: regular
files only, capped) and the security patterns a scan looks for (``security_patterns``).

May import: ``aces_bench.core``.
"""
