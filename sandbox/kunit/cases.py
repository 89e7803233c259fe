"""KUnit in the sandbox kernel: which tests the series adds, and what a boot ran.

The series kernel has KUnit built in (kernel-series/config/kunit.config), so
every boot runs the suites before /init and prints KTAP on the console.
- `series_cases()` reads the suites and cases the patches add, from their
  text (pure; so pytest can name one test per case before anything boots);
- `boot_and_parse()` boots a machine once until the agent is ready and parses
  the console log with sandbox/ktap.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sandbox.kunit import ktap
from sandbox.guest.deadline import Deadline
from sandbox.build.kernel_source import Series, read_series
from sandbox.guest.qemu import BootRequest, Guest, GuestDied, GuestHung
from sandbox.guest.target import Target

BOOT_SECONDS = 90.0
RTC = "2038-01-19T03:13:50"

_CASE_ARRAY = re.compile(r"struct kunit_case\s+(?P<array>\w+)\[\]\s*=\s*\{(?P<body>.*?)\};", re.S)
_CASE = re.compile(r"KUNIT_CASE(?:_PARAM)?\(\s*(?P<name>\w+)")
_SUITE = re.compile(r"struct kunit_suite\s+\w+\s*=\s*\{(?P<body>.*?)\};", re.S)
_SUITE_NAME = re.compile(r"\.name\s*=\s*\"(?P<name>[^\"]+)\"")
_SUITE_CASES = re.compile(r"\.test_cases\s*=\s*(?P<array>\w+)")


@dataclass(frozen=True)
class Case:
    suite: str
    name: str
    source: str  # the patch that adds it

    @property
    def id(self) -> str:
        return f"{self.suite}.{self.name}"


def added_text(patch: str) -> str:
    """The lines a unified diff adds, without their '+'."""
    return "\n".join(line[1:] for line in patch.splitlines()
                     if line.startswith("+") and not line.startswith("+++"))


def cases_in(source: str, origin: str = "") -> list[Case]:
    """The KUnit cases a C source defines, per suite, in order."""
    arrays = {m["array"]: [c["name"] for c in _CASE.finditer(m["body"])]
              for m in _CASE_ARRAY.finditer(source)}
    found = []
    for suite in _SUITE.finditer(source):
        name, cases = _SUITE_NAME.search(suite["body"]), _SUITE_CASES.search(suite["body"])
        if name and cases:
            found += [Case(name["name"], case, origin) for case in arrays.get(cases["array"], [])]
    return found


def series_cases(series: Series | None = None) -> list[Case]:
    """Every KUnit case the patches of kernel-series/series add."""
    series = series or read_series()
    return [case for patch in series.patches
            for case in cases_in(added_text(patch.read_text()), patch.name)]


def boot_and_parse(target: Target, evidence: Path) -> ktap.Document | None:
    """Boot until the agent is ready (KUnit has run by then) and parse the console."""
    evidence.mkdir(parents=True, exist_ok=True)
    request = BootRequest(target.machine, target.kernel.boot_image, target.initramfs.path,
                          RTC, target.accel.name, evidence)
    with Guest(request) as guest:
        try:
            guest.wait_ready(Deadline(BOOT_SECONDS))
        except (GuestDied, GuestHung):
            pass  # what the console holds says how far KUnit got
        finally:
            guest.stop()
    console = (evidence / "console.log").read_text("utf-8", "replace")
    return ktap.parse_text(console)
