"""Two runs of one scenario, compared (pure).

Under time warp the guest's clock runs on the instructions it executes and
jumps over its idle time, so a scenario run twice observes the same values:
the same errnos, the same wake-up seconds, the same wrapped tv_sec. What
still differs is what the host's timing leaks in: the agent spins while the
host prepares the next command, so the fractions of a second between one
command and the next (an `elapsed`, a timer's `value`) vary. A scenario
names those fields in `varying`; everything else must match.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sandbox.run.observations import Observation

MISSING = "(no such observation)"


@dataclass(frozen=True)
class Difference:
    key: tuple[str, ...]  # Observation.key, and the occurrence of that key
    field: str
    first: object
    second: object

    def __str__(self) -> str:
        where = " ".join(self.key)
        return f"{where} {self.field}: {self.first!r} then {self.second!r}"


def _fields(observation: Observation) -> dict[str, object]:
    return {"errno": observation.errno, **observation.values}


def _numbered(observations: Iterable[Observation]) -> dict[tuple[str, ...], Observation]:
    """Each observation under its key and its occurrence of that key (a phase
    may print one call more than once)."""
    seen: dict[tuple[str, ...], int] = defaultdict(int)
    numbered: dict[tuple[str, ...], Observation] = {}
    for observation in observations:
        occurrence = seen[observation.key]
        seen[observation.key] += 1
        numbered[(*observation.key, str(occurrence))] = observation
    return numbered


def differences(first: Sequence[Observation], second: Sequence[Observation],
                varying: Iterable[str] = ()) -> tuple[Difference, ...]:
    """What the second run observed differently from the first, field by
    field, leaving out the varying fields."""
    skip = frozenset(varying)
    one, two = _numbered(first), _numbered(second)
    found = []
    for key in list(one) + [k for k in two if k not in one]:
        if key not in one or key not in two:
            found.append(Difference(key, "", MISSING if key not in one else "present",
                                    MISSING if key not in two else "present"))
            continue
        a, b = _fields(one[key]), _fields(two[key])
        for name in list(a) + [n for n in b if n not in a]:
            if name not in skip and a.get(name) != b.get(name):
                found.append(Difference(key, name, a.get(name), b.get(name)))
    return tuple(found)
