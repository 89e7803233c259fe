"""The verbs a person types (the CLI behind the justfile), the run-and-judge
job the CLI and pytest share, and the benchmark."""
