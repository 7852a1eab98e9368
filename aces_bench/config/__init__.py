"""Hydra composition (``schema``/``store``) and the validated run spec (``spec``)."""
