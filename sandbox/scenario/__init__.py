"""Scenario files: the matchers, the model, the validating parser, the disks
a scenario declares, and the probe catalogue it is checked against. Pure:
nothing here runs anything."""
