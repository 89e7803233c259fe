"""Recording mode: what a run observed, written into its scenario file as
expectations, for an author to edit rather than type (`just record`).

Pure: scenario text and observations in, scenario text out. Only probe steps
without any expectation are filled; every other line stays as it was.
Each recorded group is marked with a TODO for the author to name the kernel
or glibc function that decides it, as every expectation in scenarios/ does.

    time field, value fits   seconds = { between = [t - 60 s, t + 60 s] }
    time field, negative     seconds = { wrapped = [...] }  (the 2038 wrap)
    failed call              errno = "EOVERFLOW"
    small whole number       warned = 1, shm_atime_high = 0  (|n| < 1000)
    fraction (durations)     elapsed = { between = [v / 2, 2 v + 1] }
    text                     fs = "ext4"

Other numbers (nanoseconds of a clock reading, counters) are listed in a
comment as left out: one run cannot tell a constant from a value that
varies, and a recorded scenario must pass when it is run again.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from sandbox.base.errors import InputError
from sandbox.base.timefmt import ROLLOVER, UINT32_SPAN, format_time
from sandbox.run.observations import Observation
from sandbox.scenario.model import JudgedStep, ProbeStep, RunStep, Scenario, is_time_field

WINDOW = 60  # seconds either side of a recorded time
NO_ERRNO = 'errno = "none"'  # a call that succeeded and printed no field
SMALL = 1000  # whole numbers below this are recorded as they are
SHORT_TEXT = 80  # texts up to this long (one line) are recorded as they are
TODO = "# TODO: name the kernel or glibc function that decides this (recorded {where})"
_STEP_RE = re.compile(r"^\s*\[\[step\]\]\s*(#.*)?$")


def _quoted(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (\\n, \\", \\uXXXX)."""
    return json.dumps(text, ensure_ascii=False)


def _window(lo: int, hi: int) -> str:
    return f"[{_quoted(format_time(lo))}, {_quoted(format_time(hi))}]"


def _matcher(step: JudgedStep, call: str, field: str, value: object) -> str:
    if isinstance(value, str):
        return _quoted(value)
    if is_time_field(step, call, field) and isinstance(value, int):
        if -ROLLOVER <= value < 0:
            real = value + UINT32_SPAN
            return f"{{ wrapped = {_window(max(real - WINDOW, ROLLOVER), min(real + WINDOW, UINT32_SPAN - 1))} }}"
        return f"{{ between = {_window(value - WINDOW, value + WINDOW)} }}"
    if isinstance(value, float):
        return f"{{ between = [{round(value / 2, 3)}, {round(2 * value + 1, 3)}] }}"
    return str(value)


def _recorded(step: JudgedStep, call: str, field: str, value: object) -> bool:
    if isinstance(value, int) and not is_time_field(step, call, field):
        return abs(value) < SMALL
    if isinstance(value, str):  # a program's output: one short line at most
        return len(value) <= SHORT_TEXT and "\n" not in value.rstrip("\n")
    return True


def _call_lines(step: JudgedStep, observation: Observation) -> list[str]:
    """A probe's call as one line `call = { field = ... }`; a run step's
    program as its own fields, one per line."""
    if observation.errno is not None:
        fields = [f"errno = {_quoted(observation.errno)}"]
        left_out: list[str] = []
    else:
        values = observation.values.items()
        fields = [f"{name} = {_matcher(step, observation.call, name, value)}"
                  for name, value in values if _recorded(step, observation.call, name, value)]
        left_out = [name for name, value in values if not _recorded(step, observation.call, name, value)]
    note = f"# left out, may vary: {', '.join(left_out)}" if left_out else ""
    if isinstance(step, RunStep):
        return fields + ([note] if note else [])
    line = f"{observation.call} = {{ {', '.join(fields or [NO_ERRNO])} }}"
    return [line + (f"  {note}" if note else "")]


def expectation_text(step: JudgedStep, observations: Iterable[Observation], where: str) -> list[str]:
    """The [step.expect.<flavour>] tables of one step: one per flavour, one
    line per call (its first observation), in the order they were seen."""
    by_flavour: dict[str, dict[str, Observation]] = {}
    for o in observations:
        if o.phase == step.phase and o.probe == step.probe:
            by_flavour.setdefault(o.flavour, {}).setdefault(o.call, o)
    lines: list[str] = []
    for flavour, calls in by_flavour.items():
        lines += ["", TODO.format(where=where), f"[step.expect.{flavour}]"]
        lines += [line for o in calls.values() for line in _call_lines(step, o)]
    return lines


def _step_chunks(text: str) -> tuple[list[str], list[list[str]]]:
    """(lines before the first [[step]], each step's lines up to the next)."""
    head: list[str] = []
    chunks: list[list[str]] = []
    for line in text.splitlines():
        if _STEP_RE.match(line):
            chunks.append([])
        (chunks[-1] if chunks else head).append(line)
    return head, chunks


def _split_trailer(chunk: list[str]) -> tuple[list[str], list[str]]:
    """A step's own lines, and the comments and blank lines that lead into
    the next step (they stay with it)."""
    end = len(chunk)
    while end > 1 and (not chunk[end - 1].strip() or chunk[end - 1].lstrip().startswith("#")):
        end -= 1
    return chunk[:end], chunk[end:]


def record(text: str, scenario: Scenario, observations: Sequence[Observation], where: str) -> str:
    """The scenario text with every probe step that has no expectations
    filled from the observations; `where` says what was run (machine, kernel)."""
    head, chunks = _step_chunks(text)
    if len(chunks) != len(scenario.steps):
        raise InputError(scenario.file, "step", f"{len(chunks)} [[step]] lines for {len(scenario.steps)} "
                         "steps; recording needs one [[step]] header per step")
    out = list(head)
    for step, chunk in zip(scenario.steps, chunks):
        own, trailer = _split_trailer(chunk)
        out += own
        if isinstance(step, (ProbeStep, RunStep)) and not step.expectations and not step.machine_expectations:
            out += expectation_text(step, observations, where)
        out += trailer
    return "\n".join(out) + "\n"
