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
from dataclasses import dataclass, replace
from pathlib import Path

from sandbox.base.evidence import Evidence
from sandbox.kunit import ktap
from sandbox.guest.deadline import Deadline
from sandbox.build.kernel_source import Series, read_series
from sandbox.guest.qemu import Guest, GuestDied, GuestHung
from sandbox.guest.target import Target
from sandbox.run import drive

BOOT_SECONDS = 90.0
"""KUnit runs its suites before /init: the boot to the agent takes longer than a scenario's."""
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


_FILE_DIFF = re.compile(r"^diff --git a/\S+ b/(?P<path>\S+)\n", re.M)
_HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,(?P<count>\d+))? \+\d+(?:,(?P<new_count>\d+))? @@")


def file_diffs(patch: str) -> dict[str, str]:
    """Each file's part of a `git format-patch` text, by the path it ends at."""
    parts = list(_FILE_DIFF.finditer(patch))
    ends = [m.start() for m in parts[1:]] + [len(patch)]
    return {m["path"]: patch[m.end():end] for m, end in zip(parts, ends)}


def apply_diff(old: list[str], diff: str) -> list[str]:
    """A file's lines after one file diff (its hunks, in order) is applied.
    Trusts the diff: the series applies with git am before any kernel is built."""
    new: list[str] = []
    pos = 0  # lines of `old` consumed
    lines = diff.splitlines()
    for i, line in enumerate(lines):
        hunk = _HUNK.match(line)
        if not hunk:
            continue
        start, count = int(hunk["start"]), int(hunk["count"] or "1")
        upto = start if count == 0 else start - 1  # an empty old side inserts after `start`
        new += old[pos:upto]
        pos = upto
        # The counts end the hunk: "-- " after the last one is the signature.
        left = {"-": count, "+": int(hunk["new_count"] or "1")}
        for body in lines[i + 1:]:
            if left["-"] == left["+"] == 0:
                break
            kind, text = body[:1] or " ", body[1:]
            if kind == "\\":  # "\ No newline at end of file"
                continue
            if kind in " -":
                left["-"] -= 1
                pos += 1
            if kind in " +":  # a context line's text is the old line's
                left["+"] -= 1
                new.append(text)
    return new + old[pos:]


def series_cases(series: Series | None = None) -> list[Case]:
    """Every KUnit case the patches of kernel-series/series add, in the files
    the series creates, as the last patch leaves them: a later patch may add
    a case to an earlier patch's suite. Each case names the patch adding it."""
    series = series or read_series()
    files: dict[str, list[str]] = {}
    added_by: dict[str, str] = {}  # "file:case" -> the patch whose + line adds it
    for patch in series.patches:
        text = patch.read_text()
        for path, diff in file_diffs(text).items():
            if "\n--- /dev/null\n" in "\n" + diff or path in files:
                files[path] = apply_diff(files.get(path, []), diff)
                for case in _CASE.finditer(added_text(diff)):
                    added_by[f"{path}:{case['name']}"] = patch.name
    return [replace(case, source=added_by.get(f"{path}:{case.name}", ""))
            for path, lines in files.items()
            for case in cases_in("\n".join(lines))]


def boot_and_parse(target: Target, evidence: Path) -> ktap.Document | None:
    """Boot until the agent is ready (KUnit has run by then), through the drive
    loop's boot, and parse the console."""
    evidence.mkdir(parents=True, exist_ok=True)
    request = target.boot(RTC, evidence)
    with Guest(request) as guest:
        try:
            drive.boot(guest, Deadline(BOOT_SECONDS), drive.Driven(), BOOT_SECONDS)
        except (GuestDied, GuestHung):
            pass  # what the console holds says how far KUnit got
        finally:
            guest.stop()
    console = Evidence(evidence).console.read_text("utf-8", "replace")
    return ktap.parse_text(console)
