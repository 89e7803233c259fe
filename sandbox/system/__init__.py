"""Whole-system rehearsal: a Debian system (or the user's root filesystem) with
its own init across the rollover, and a verdict per unit (docs/system-rehearsal.md)."""
