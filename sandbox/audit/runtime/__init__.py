"""The runtime audit: each program run on its machine's series kernel across
the rollover (`just rehearse`), its facts read and a runtime verdict joined
to its static record. `audit` is the entry (`audit_runtime`); `plan`, `boot`,
`facts`, `verdict`, `lines` and `corpus` its stages."""
