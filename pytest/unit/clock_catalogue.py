"""A probe catalogue of one probe (clock, every flavour) for the tests that
parse small scenario files without the repository's rootfs/manifest.toml."""
from __future__ import annotations

from sandbox.scenario.catalogue import parse_catalogue

FILE = "scenarios/kernel/case.toml"
CATALOGUE = parse_catalogue("""\
[initramfs]

[probe.clock]
calls.time = { seconds = "time" }
flavours = ["time32-syscall", "time32-libc", "time64", "native64"]
""", "rootfs/manifest.toml")
