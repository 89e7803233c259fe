"""Running a scenario: steps planned into guest commands (pure), the run loop
against a guest, the observations it collects and the record it leaves."""
