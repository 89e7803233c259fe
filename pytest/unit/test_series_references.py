"""Every "kernel-series NNNN" or "kernel-series/NNNN" in the scenarios, the
probes, the sandbox's code, the config fragments and the docs names a patch
that exists: the series was renumbered once (v3: the SIOCGSTAMP fix first,
the APIC aid in aids/), and a comment still naming a v2 number points at
the wrong patch. docs/benchmarks.md is history (its entries keep the numbers
of their day); the mutants (kernel-series/regressions/NNNN) have their own."""
from __future__ import annotations

import re
from pathlib import Path

from sandbox.base import paths

SEARCHED = ("scenarios", "rootfs", "sandbox", "docs", "kernel-series/config")
HISTORY = {paths.REPO / "docs" / "benchmarks.md"}
SUFFIXES = {".toml", ".c", ".h", ".py", ".md", ".config", ".sh"}

# "kernel-series 0003", "kernel-series/0002-rtc-...", "kernel-series/aids/0001",
# "kernel-series 0025-0026", "kernel-series 0016 and 0017", also when a
# comment wraps after "kernel-series".
_REF_RE = re.compile(r"kernel-series(?:/[ \t]?|\s+(?:(?:#|\*|//)[ \t]+)?)(?P<aids>aids/)?"
                     r"(?P<numbers>\d{4}(?:(?:-|\.\.|, | and )\d{4})*)(?![\d.])")


def references(text: str) -> list[tuple[int, str]]:
    """(line, "NNNN" or "aids/NNNN") for each patch a text names."""
    found = []
    for match in _REF_RE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found += [(line, (match["aids"] or "") + number)
                  for number in re.findall(r"\d{4}", match["numbers"])]
    return found


def patch_numbers(series: Path) -> set[str]:
    """The numbers of the patch files of a series folder and of its aids/."""
    numbers = {p.name[:4] for p in series.glob("[0-9][0-9][0-9][0-9]-*.patch")}
    return numbers | {"aids/" + p.name[:4] for p in series.glob("aids/[0-9][0-9][0-9][0-9]-*.patch")}


def dangling(files: list[Path], series: Path) -> list[str]:
    known = patch_numbers(series)
    return [f"{path.relative_to(paths.REPO) if path.is_relative_to(paths.REPO) else path}:{line}: "
            f"kernel-series {number}, which is no patch of {series.name}/"
            for path in files for line, number in references(path.read_text())
            if number not in known]


def searched_files() -> list[Path]:
    return sorted(path for folder in SEARCHED for path in (paths.REPO / folder).rglob("*")
                  if path.suffix in SUFFIXES and path.is_file() and path not in HISTORY)


def test_every_reference_names_a_patch_of_the_series() -> None:
    files = searched_files()
    assert len(files) > 50 and sum(len(references(p.read_text())) for p in files) > 30
    wrong = dangling(files, paths.KERNEL_SERIES)
    assert not wrong, "renumber these (kernel-series/0000-cover-letter.patch lists the series):\n" + "\n".join(wrong)


def test_a_made_up_reference_is_found(tmp_path: Path) -> None:
    comment = tmp_path / "made-up.toml"
    comment.write_text("# kernel-series 0003: the accounting\n"
                       "# kernel-series/0099-time-nothing.patch, and kernel-series/aids/0001\n"
                       "# kernel-series 0027-0029; kernel-series/aids/0002; kernel-series\n"
                       "# 0030 (wrapped); kernel-series/regressions/0031 is a mutant's\n")
    assert dangling([comment], paths.KERNEL_SERIES) == [
        f"{comment}:2: kernel-series 0099, which is no patch of kernel-series/",
        f"{comment}:3: kernel-series 0029, which is no patch of kernel-series/",
        f"{comment}:3: kernel-series aids/0002, which is no patch of kernel-series/",
        f"{comment}:3: kernel-series 0030, which is no patch of kernel-series/"]


def test_references_read_ranges_lists_and_file_names() -> None:
    assert references("kernel-series 0025-0026 and kernel-series/0002-rtc-class-...") == [
        (1, "0025"), (1, "0026"), (1, "0002")]
    assert references("(patches\n# kernel-series 0016 and 0017), kernel-series/ 0003") == [
        (2, "0016"), (2, "0017"), (2, "0003")]
    assert references("kernel-series 6.12, kernel-series/config, kernel-series v3") == []
