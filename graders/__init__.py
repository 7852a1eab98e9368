"""Graders: pure functions from a trial's evidence to metric scores."""
