"""Judging: expectations against observations, one verdict each. Pure."""
