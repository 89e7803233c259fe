"""Shared basics with no knowledge of the pipeline: errors, paths, progress,
time text, input checks, host commands, and the machines and kernel variants
as data tables."""
