"""Helpers shared by the tests, imported as ``support.<module>``.

``tests/`` is on the import path: for pytest through ``pythonpath`` in pyproject.toml,
for the scripts run outside pytest (``make bench``, ``make validate``, the golden
generators) through ``PYTHONPATH=tests`` in the Makefile. One module per concern
(``support.studies``: the CLI in a subprocess and study overrides; ``support.backends``:
the local sandbox; ``support.model_server``: the scripted loopback model; ...).
"""
