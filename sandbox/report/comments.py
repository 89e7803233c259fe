"""The comments of a scenario file, attached to what they explain.

Every expectation group of a scenario carries a comment naming the kernel or
glibc function that decides it (docs/scenario-authoring.md). The TOML parser
drops comments, so this reads the file's text: the block of `#` lines right
above a table header (no blank line between), and the comments inside the
table's body, belong to that table.

    [[step]]                                   -> the step's comment
    [step.expect.<flavour>]                    -> (step, flavour)
    [step.expect.<flavour>.<call>]             -> (step, flavour, call)
    [step.expect-on.<machine>.<flavour>...]    -> the same, on that machine
    [[variant]]                                -> the family row's comment
    the first block of the file                -> the file's header

A call table without a comment of its own takes the one of the flavour's
previous call table in the same step (the usual way of writing a group: one
comment above its first table). Flavour groups (`[flavour-groups]`) are
resolved by `ScenarioComments.explain`. Pure: text in, text out.
"""
from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*(\]\]?)\s*(#.*)?$")
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_\-\"'.]+)\s*=")
_COMMENT = re.compile(r"^\s*#(.*)$")

Key = tuple[int, str, str, str]  # step index, machine ("" for every machine), flavour or group, call ("" for all)


def _split_key(text: str) -> list[str]:
    """A dotted TOML key as its parts: 'step.expect."time32-libc".time'."""
    return [part.strip().strip('"').strip("'") for part in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', text)]


def _trailing_comment(line: str) -> str:
    """The comment at the end of a key line, outside strings (good enough for scenario files)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[i + 1:].strip()
    return ""


def _clean(lines: list[str]) -> str:
    """Comment lines as text: the '# ' removed, decoration lines (----) kept as text."""
    texts = []
    for line in lines:
        match = _COMMENT.match(line)
        body = match.group(1) if match else line
        texts.append(body[1:] if body.startswith(" ") else body)
    while texts and not texts[0].strip():
        texts.pop(0)
    while texts and not texts[-1].strip():
        texts.pop()
    return "\n".join(t.rstrip() for t in texts)


@dataclass
class ScenarioComments:
    """The comments of one scenario file, by what they explain."""

    header: str = ""
    steps: dict[int, str] = field(default_factory=dict)
    expect: dict[Key, str] = field(default_factory=dict)
    variants: dict[str, str] = field(default_factory=dict)
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def explain(self, step: int, flavour: str, call: str, machine: str = "") -> str:
        """The comment behind (step, flavour, call) on `machine`: a machine's own
        (expect-on) first, then the call's, then the flavour's, each also
        through the flavour groups that hold the flavour; "" when none."""
        names = [flavour] + [g for g, members in self.groups.items() if flavour in members]
        machines = [machine, ""] if machine else [""]
        for where in machines:
            for name in names:
                for key in ((step, where, name, call), (step, where, name, "")):
                    if self.expect.get(key):
                        return self.expect[key]
        return ""

    def step(self, step: int) -> str:
        return self.steps.get(step, "")

    def variant(self, name: str) -> str:
        return self.variants.get(name, "")


def _groups(text: str) -> dict[str, tuple[str, ...]]:
    try:
        raw = tomllib.loads(text).get("flavour-groups", {})
    except tomllib.TOMLDecodeError:
        return {}
    if not isinstance(raw, dict):
        return {}
    return {str(k): tuple(str(f) for f in v) for k, v in raw.items() if isinstance(v, list)}


def parse_comments(text: str) -> ScenarioComments:
    """The comments of a scenario file's text (see the module's docstring)."""
    found = ScenarioComments(groups=_groups(text))
    pending: list[str] = []  # the comment block just read, not yet attached
    header_done = False
    step = -1
    table: tuple[str, ...] = ()  # the current table: ("step",), ("expect", machine, flavour, call), ...
    last_call_comment: dict[tuple[int, str, str], str] = {}  # (step, machine, flavour) -> comment

    def attach(key: tuple[str, ...], text: str) -> None:
        if not text:
            return
        if key[0] == "step":
            found.steps[step] = "\n".join(filter(None, (found.steps.get(step, ""), text)))
        elif key[0] == "expect":
            _, machine, flavour, call = key
            k = (step, machine, flavour, call)
            found.expect[k] = "\n".join(filter(None, (found.expect.get(k, ""), text)))
            if call:
                last_call_comment[step, machine, flavour] = found.expect[k]
        elif key[0] == "variant":
            name = key[1]
            found.variants[name] = "\n".join(filter(None, (found.variants.get(name, ""), text)))

    variant_rows = 0
    variant_text: dict[int, str] = {}
    for line in text.splitlines():
        if _COMMENT.match(line):
            pending.append(line)
            continue
        if not line.strip():
            if pending and not header_done:
                found.header = _clean(pending)
                header_done = True
            pending = []
            continue
        header = _HEADER.match(line)
        if header and header.group(1) in ("[", "[[") and "=" not in header.group(2):
            if not header_done:  # a table before any blank line: the block above is the table's
                header_done = True
            comment = _clean(pending)
            pending = []
            parts = _split_key(header.group(2))
            if header.group(1) == "[[" and parts == ["step"]:
                step += 1
                table = ("step",)
                attach(table, comment)
            elif header.group(1) == "[[" and parts == ["variant"]:
                table = ("variant", str(variant_rows))
                variant_text[variant_rows] = comment
                variant_rows += 1
            elif parts[:2] == ["step", "expect"] and len(parts) in (3, 4):
                table = ("expect", "", parts[2], parts[3] if len(parts) == 4 else "")
                _expect_header(table, comment, step, last_call_comment, attach)
            elif parts[:2] == ["step", "expect-on"] and len(parts) == 5:
                table = ("expect", parts[2], parts[3], parts[4])
                _expect_header(table, comment, step, last_call_comment, attach)
            elif parts[:2] == ["step", "expect-on"] and len(parts) == 4:
                # a machine's flavour table replaces only the calls it names: its
                # comment goes to each of them (below), not to the whole flavour
                table = ("expect-on", parts[2], parts[3], comment)
            else:
                table = ("other",)
            continue
        if not header_done:  # a key right below the first block: that block is the header
            found.header = _clean(pending)
            header_done = True
            pending = []
        key_line = _KEY_LINE.match(line)
        comment = "\n".join(filter(None, (_clean(pending), _trailing_comment(line))))
        pending = []
        if table and table[0] == "expect-on" and key_line:
            _, machine, flavour, table_comment = table
            call = _split_key(key_line.group(1))[0]
            attach(("expect", machine, flavour, call), "\n".join(filter(None, (table_comment, comment))))
            continue
        if not comment:
            continue
        if table and table[0] == "expect" and key_line:
            _, machine, flavour, call = table
            if call:  # a field of a call table: the call's comment
                attach(table, comment)
            else:  # a call of a flavour table
                attach(("expect", machine, flavour, _split_key(key_line.group(1))[0]), comment)
        elif table and table[0] in ("step", "variant"):
            if table[0] == "variant":
                variant_text[int(table[1])] = "\n".join(filter(None, (variant_text.get(int(table[1]), ""), comment)))
            else:
                attach(table, comment)
    if pending and not header_done:
        found.header = _clean(pending)
    _name_variants(text, variant_text, found)
    return found


def _expect_header(table: tuple[str, ...], comment: str, step: int,
                   last_call_comment: dict[tuple[int, str, str], str],
                   attach: Callable[[tuple[str, ...], str], None]) -> None:
    """An expect table's own comment, or, for a call table without one, the
    comment of the flavour's previous call table in the step."""
    _, machine, flavour, call = table
    if not comment and call:
        comment = last_call_comment.get((step, machine, flavour), "")
    attach(table, comment)


def _name_variants(text: str, variant_text: dict[int, str], found: ScenarioComments) -> None:
    """Family rows are named by their `name` key: key the row comments by it."""
    try:
        rows = tomllib.loads(text).get("variant", [])
    except tomllib.TOMLDecodeError:
        return
    for number, row in enumerate(rows if isinstance(rows, list) else []):
        if isinstance(row, dict) and isinstance(row.get("name"), str) and variant_text.get(number):
            found.variants[row["name"]] = variant_text[number]


def lines_naming(comment: str, word: str) -> list[str]:
    """The lines of a comment that name `word` as a whole word (a call's own line
    in a block that lists several)."""
    pattern = re.compile(rf"(?<![\w]){re.escape(word)}(?![\w])")
    return [line for line in comment.splitlines() if pattern.search(line)]
