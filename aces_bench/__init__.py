"""aces-bench: paired with/without-skill evaluation of agent skills on Harbor."""

__version__ = "0.1.0"
