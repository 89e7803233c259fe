"""kbuild's own output, read: its steps (`  CC      kernel/time/time.o`) and
the count a machine's previous build of the same variant took (pure but
for reading build-info.json files)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Iterable

# kbuild's quiet commands print "  <WORD>[ [M]]  <target>": CC, LD, AR, AS,
# HOSTCC, GEN, OBJCOPY... Make's own lines, the config merge's chatter,
# compiler diagnostics and "  Kernel: arch/arm/boot/zImage is ready" do not match.
STEP = re.compile(r"^  ([A-Z][A-Z0-9_]*)(?: \[M\])?\s+\S")
STEPS_KEY = "build_steps"
"""build-info.json: how many kbuild steps `make <targets>` printed."""


def step_of(line: str) -> str | None:
    """The command word of a kbuild step line (CC, LD, ...), or None."""
    match = STEP.match(line)
    return match.group(1) if match else None


def step_counter(tick: Callable[[int], None]) -> Callable[[str], None]:
    """A line sink for make's output that ticks once per kbuild step."""
    def on_line(line: str) -> None:
        if step_of(line):
            tick(1)
    return on_line


def count_steps(lines: Iterable[str]) -> int:
    return sum(1 for line in lines if step_of(line))


def steps_in_log(log: Path) -> int | None:
    """The steps a build.log holds, or None without one."""
    try:
        return count_steps(log.read_text(errors="replace").splitlines())
    except FileNotFoundError:
        return None


def previous_steps(kernels: Path, machine: str, variant: str, tree: str = "6.1") -> int | None:
    """The step count of the newest cached build of this machine, variant and
    tree (a mutant counts as variant "mutant": it builds incrementally; a
    build-info.json without "tree" is of 6.1, the only tree then), or None."""
    newest: tuple[str, int] | None = None
    for info_path in kernels.glob(f"{machine}-*/build-info.json"):
        try:
            info = json.loads(info_path.read_text())
        except (OSError, ValueError):
            continue
        kind = "mutant" if "mutant" in info else info.get("variant")
        steps, built = info.get(STEPS_KEY), str(info.get("built_at", ""))
        same = info.get("machine") == machine and kind == variant and info.get("tree", "6.1") == tree
        if same and isinstance(steps, int):
            if newest is None or built > newest[0]:
                newest = (built, steps)
    return newest[1] if newest else None
