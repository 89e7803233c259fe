"""The Debian 12 armhf system across the rollover, one boot: systemd as PID 1 on
an overlay above its image (whose checksum must not change), the agent
outside it, a night cut to an hour around the rollover so that the test
stays short, and a verdict for every unit (docs/system-rehearsal.md).
The image is built on first use (minutes: `just system debian12-armhf`
builds it too) and cached by its package versions."""
from __future__ import annotations

from pathlib import Path

from sandbox.system.rehearse import SystemRequest, rehearse_system
from sandbox.system.verdict import VERDICTS


def test_debian12_armhf_crosses_the_rollover_with_a_verdict_per_unit(y2038_evidence: Path) -> None:
    result = rehearse_system(SystemRequest("debian12-armhf", y2038_evidence / "debian12-armhf",
                                           "2038-01-19T02:50:00Z", "2038-01-19T03:40:00Z"))
    print("\n" + "\n".join(result.table()))
    assert result.outcome == "completed", result.failure
    assert result.checksum_before == result.checksum_after  # the overlay kept the image as it was
    units = {f.unit for f in result.facts}
    assert {"cron.service", "rsyslog.service", "chrony.service", "y2038-tick.timer", "init.scope"} <= units
    assert all(v.verdict in VERDICTS for v in result.verdicts)
    assert (y2038_evidence / "debian12-armhf" / "journal.json").stat().st_size > 0
