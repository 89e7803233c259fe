"""The comments of a scenario file, attached to what they explain (pure).

Every expectation group of a scenario carries a comment naming the kernel or
glibc function that decides it (docs/scenario-authoring.md). tomllib drops
comments, so this reads the file's lines as TOML lays them out: multi-line
strings and arrays are values, not comments or tables; each table header and
each key is read by tomllib itself, so a quoted or dotted key is the path
the scenario parser sees; `[[step]]` and `[[variant]]` are counted. The
block of `#` lines right above a header (no blank line between), the comment
at the end of the header's line and the comments inside the table's body
belong to that table:

    [[step]]                                       -> the step
    [step.expect.<flavour>] / [...<call>]          -> CommentKey(step, flavour[, call])
    [step.expect-on.<machine>.<flavour>...]        -> the same, on that machine
    [step.expect-variant.<row>.<flavour>...]       -> the same, in that family row
    expect.<flavour>.<call> = ... in a step's body -> that call
    [[variant]]                                    -> the family row
    the first block of the file                    -> the file's header

A call table without a comment of its own takes the one of the flavour's
previous call table in the same step (the usual way of writing a group: one
comment above its first table); a machine's flavour table replaces only the
calls it names, so its comment goes to each of them. Flavour groups and the
steps a row leaves out (`variants`) are resolved by `ScenarioComments`.
"""
from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field

_REF_RE = re.compile(r"\$(\$|\{([^}]*)\})")  # as sandbox/scenario/family.py reads "${name}"
Path = tuple[str | int, ...]  # a TOML path: keys, and the index of an array of tables


@dataclass(frozen=True)
class CommentKey:
    """What an expectation comment explains."""

    step: int  # the step's index in the file (a family row may leave steps out)
    flavour: str  # a flavour, a flavour group, or a run step's userland
    call: str = ""  # "" for the whole flavour
    machine: str = ""  # expect-on.<machine>; "" on every machine
    variant: str = ""  # expect-variant.<row>; "" in every row


@dataclass(frozen=True)
class ScenarioComments:
    """The comments of one scenario file, by what they explain."""

    header: str = ""
    steps: Mapping[int, str] = field(default_factory=dict)  # by the step's index in the file
    expect: Mapping[CommentKey, str] = field(default_factory=dict)
    variants: Mapping[str, str] = field(default_factory=dict)
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    step_rows: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # steps of some rows only
    replaced: frozenset[CommentKey] = frozenset()  # the calls a row's own table names
    values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # by row ("": [values]): text values

    def file_step(self, step: int, variant: str = "") -> int:
        """The file's index of step `step` of row `variant`."""
        kept = [i for i in range(step + len(self.step_rows) + 1)
                if not variant or i not in self.step_rows or variant in self.step_rows[i]]
        return kept[step] if step < len(kept) else step

    def explain(self, step: int, flavour: str, call: str, machine: str = "", variant: str = "") -> str:
        """The comment behind (step, flavour, call) of row `variant` on
        `machine`: a machine's own (expect-on) first, then the row's own
        (expect-variant), then the step's; in each the call's, then the
        flavour's, each also through the flavour groups that hold the
        flavour; "" when none."""
        at = self.file_step(step, variant)
        names = [flavour] + [g for g, members in self.groups.items() if flavour in members] + [
            key for key in {k.flavour for k in self.expect} if "$" in key and self._text(key, variant) == flavour]
        for name in names if machine else ():
            for each in (call, ""):
                if self.expect.get(CommentKey(at, name, each, machine)):
                    return self.expect[CommentKey(at, name, each, machine)]
        for name in names:
            own, shared = CommentKey(at, name, call, variant=variant), CommentKey(at, name, call)
            flavours = (CommentKey(at, name, "", variant=variant), CommentKey(at, name, ""))
            # a row's table for the call replaces the step's, its comment too
            for key in ((own,) if own in self.replaced else (own, shared)) + flavours:
                if self.expect.get(key):
                    return self.expect[key]
        return ""

    def _text(self, key: str, variant: str) -> str:
        """A key as row `variant` reads it: "${old}" -> "debian12-i386"."""
        scope = {**self.values.get("", {}), **self.values.get(variant, {}), "variant": variant}
        if key.startswith("$") and key[1:] in scope:
            return scope[key[1:]]
        return _REF_RE.sub(lambda m: "$" if m.group(1) == "$" else scope.get(m.group(2), m.group(0)), key)

    def step(self, step: int, variant: str = "") -> str:
        return self.steps.get(self.file_step(step, variant), "")

    def variant(self, name: str) -> str:
        return self.variants.get(name, "")


# --------------------------------------------------------------------------
# The file's lines as TOML lays them out.


@dataclass(frozen=True)
class _Line:
    kind: str  # "blank", "comment", "table", "array" ([[...]]), "key"
    path: Path = ()  # a header's or a key's path, as tomllib reads it
    comment: str = ""  # a comment line's text, or the comment at the end of a header or a value


@dataclass
class _Scan:
    """Where a value's scan stands at the end of a line: inside a multi-line
    string (its delimiter) and how deep in brackets."""

    string: str = ""
    depth: int = 0

    @property
    def open(self) -> bool:
        return bool(self.string) or self.depth > 0


def _scan(text: str, scan: _Scan) -> str | None:
    """Scan `text` (a value, or the rest of one), updating `scan`; the comment
    that ends the line, None when there is none."""
    i = 0
    while i < len(text):
        if scan.string:
            end = text.find(scan.string, i)
            while end > 0 and scan.string == '"""' and _escaped(text, end):
                end = text.find(scan.string, end + 1)
            if end < 0:
                return None
            i, scan.string = end + 3, ""
            continue
        char = text[i]
        if text.startswith(('"""', "'''"), i):
            scan.string, i = text[i:i + 3], i + 3
        elif char in "\"'":
            i = _string_end(text, i)
        elif char in "[{":
            scan.depth, i = scan.depth + 1, i + 1
        elif char in "]}":
            scan.depth, i = scan.depth - 1, i + 1
        elif char == "#":
            return text[i + 1:].strip()
        else:
            i += 1
    return None


def _escaped(text: str, at: int) -> bool:
    backslashes = len(text[:at]) - len(text[:at].rstrip("\\"))
    return backslashes % 2 == 1


def _string_end(text: str, start: int) -> int:
    """The index after the one-line string opening at `start`."""
    quote, i = text[start], start + 1
    while i < len(text) and not (text[i] == quote and (quote == "'" or not _escaped(text, i))):
        i += 1
    return i + 1


def _split(text: str, stop: str) -> tuple[str, str]:
    """`text` cut at the first `stop` outside a quoted key."""
    i = 0
    while i < len(text):
        if text[i] in "\"'":
            i = _string_end(text, i)
        elif text.startswith(stop, i):
            return text[:i], text[i + len(stop):]
        else:
            i += 1
    return text, ""


def _path(document: object) -> Path:
    """The one path through a document of one key: {"a": {"b": 0}} -> ("a", "b")."""
    path: list[str | int] = []
    while isinstance(document, dict) and len(document) == 1:
        ((key, document),) = document.items()
        path.append(key)
    return tuple(path)


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    scan = _Scan()
    for raw in text.splitlines():
        if scan.open:  # inside a value begun above: neither a comment nor a table
            comment = _scan(raw, scan)
            if not scan.open and comment is not None and lines and lines[-1].kind == "key":
                lines[-1] = _Line("key", lines[-1].path, comment)
            continue
        stripped = raw.strip()
        if not stripped:
            lines.append(_Line("blank"))
        elif stripped.startswith("#"):
            lines.append(_Line("comment", comment=stripped[1:]))
        elif stripped.startswith("["):
            array = stripped.startswith("[[")
            inner, rest = _split(stripped[2 if array else 1:], "]]" if array else "]")
            path = _read_path(inner + " = 0")
            lines.append(_Line("array" if array else "table", path, _scan(rest, _Scan()) or ""))
        else:
            key, value = _split(stripped, "=")
            comment = _scan(value, scan)
            lines.append(_Line("key", _read_path(key + " = 0"), comment or ""))
    return lines


def _read_path(text: str) -> Path:
    try:
        return _path(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return ()


# --------------------------------------------------------------------------
# Comments attached by path.


def _clean(lines: list[str]) -> str:
    """Comment lines as text: the '# ' removed, decoration lines (----) kept as text."""
    texts = [line[1:] if line.startswith(" ") else line for line in lines]
    while texts and not texts[0].strip():
        texts.pop(0)
    while texts and not texts[-1].strip():
        texts.pop()
    return "\n".join(t.rstrip() for t in texts)


def _join(*texts: str) -> str:
    return "\n".join(filter(None, texts))


_SCOPES = {"expect": 0, "expect-on": 1, "expect-variant": 1}
"""The step's expectation tables, and how many keys (a machine, a row) come
before the flavour."""


def _expect_key(path: Path) -> CommentKey | None:
    """The CommentKey of a path under a step's expectations, else None."""
    if len(path) < 4 or path[0] != "step" or not isinstance(path[1], int) or path[2] not in _SCOPES:
        return None
    scope, extra = str(path[2]), _SCOPES[str(path[2])]
    rest = [str(p) for p in path[3:]]
    if len(rest) < extra + 1:
        return None
    flavour, call = rest[extra], rest[extra + 1] if len(rest) > extra + 1 else ""
    return CommentKey(path[1], flavour, call, machine=rest[0] if scope == "expect-on" else "",
                      variant=rest[0] if scope == "expect-variant" else "")


@dataclass
class _Reader:
    """Comments attached as the lines come."""

    steps: dict[int, str] = field(default_factory=dict)
    expect: dict[CommentKey, str] = field(default_factory=dict)
    rows: dict[int, str] = field(default_factory=dict)
    last_call: dict[CommentKey, str] = field(default_factory=dict)  # a flavour's last call comment
    replaced: set[CommentKey] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    table: Path = ()
    table_comment: str = ""  # a machine's flavour table: its comment goes to each call it names

    def header(self, line: _Line, comment: str) -> None:
        name = str(line.path[0]) if line.path else ""
        if line.kind == "array":
            self.counts[name] = self.counts.get(name, -1) + 1
        self.table = self._indexed(line.path)
        self.table_comment = ""
        key = _expect_key(self.table)
        if key is not None and key.variant and key.call:
            self.replaced.add(key)
        if self.table[:1] == ("step",) and len(self.table) == 2:
            self._step(comment)
        elif self.table[:1] == ("variant",) and len(self.table) == 2:
            self._row(comment)
        elif key is not None and key.machine and not key.call:
            self.table_comment = comment
        elif key is not None:
            self._expect(key, comment, inherit=True)

    def key(self, line: _Line, comment: str) -> None:
        path = self.table + line.path
        key = _expect_key(path)
        if key is not None and key.variant and key.call:
            self.replaced.add(key)
        if key is not None and (comment or self.table_comment):
            self._expect(key, _join(self.table_comment, comment), inherit=False)
        elif comment and len(self.table) == 2 and self.table[0] == "step":
            self._step(comment)
        elif comment and len(self.table) == 2 and self.table[0] == "variant":
            self._row(comment)

    def _indexed(self, path: Path) -> Path:
        """The path with the index of the array of tables it runs through:
        step.expect.time64 -> ("step", 3, "expect", "time64")."""
        if not path or str(path[0]) not in self.counts:
            return path
        return (path[0], self.counts[str(path[0])]) + path[1:]

    def _step(self, comment: str) -> None:
        if comment and isinstance(self.table[1], int):
            self.steps[self.table[1]] = _join(self.steps.get(self.table[1], ""), comment)

    def _row(self, comment: str) -> None:
        if comment and isinstance(self.table[1], int):
            self.rows[self.table[1]] = _join(self.rows.get(self.table[1], ""), comment)

    def _expect(self, key: CommentKey, comment: str, inherit: bool) -> None:
        flavour = CommentKey(key.step, key.flavour, "", key.machine, key.variant)
        if inherit and not comment and key.call:
            comment = self.last_call.get(flavour, "")
        if not comment:
            return
        self.expect[key] = _join(self.expect.get(key, ""), comment)
        if key.call:
            self.last_call[flavour] = self.expect[key]


def _document(text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _groups(document: dict[str, object]) -> dict[str, tuple[str, ...]]:
    raw = document.get("flavour-groups", {})
    if not isinstance(raw, dict):
        return {}
    return {str(k): tuple(str(f) for f in v) for k, v in raw.items() if isinstance(v, list)}


def _step_rows(document: dict[str, object]) -> dict[int, tuple[str, ...]]:
    steps = document.get("step", [])
    return {i: tuple(str(r) for r in step["variants"]) for i, step in enumerate(steps if isinstance(steps, list) else [])
            if isinstance(step, dict) and isinstance(step.get("variants"), list)}


def _texts(raw: object) -> dict[str, str]:
    table = raw if isinstance(raw, dict) else {}
    return {str(k): str(v) for k, v in table.items() if isinstance(v, (str, int)) and not isinstance(v, bool)}


def _values(document: dict[str, object]) -> dict[str, dict[str, str]]:
    """The text values a key may name: [values]'s under "", each row's under its name."""
    listed = document.get("variant", [])
    rows = {row["name"]: _texts(row) for row in (listed if isinstance(listed, list) else [])
            if isinstance(row, dict) and isinstance(row.get("name"), str)}
    return {"": _texts(document.get("values", {})), **rows}


def _row_names(document: dict[str, object], rows: dict[int, str]) -> dict[str, str]:
    """Family rows are named by their `name` key: the row comments keyed by it."""
    listed = document.get("variant", [])
    named = {i: row["name"] for i, row in enumerate(listed if isinstance(listed, list) else [])
             if isinstance(row, dict) and isinstance(row.get("name"), str)}
    return {named[i]: text for i, text in rows.items() if i in named}


def parse_comments(text: str) -> ScenarioComments:
    """The comments of a scenario file's text (see the module's docstring)."""
    reader, pending, header, header_done = _Reader(), [], "", False
    for line in _lines(text):
        if line.kind == "comment":
            pending.append(line.comment)
            continue
        if line.kind == "blank":
            if pending and not header_done:
                header, header_done = _clean(pending), True
            pending = []
            continue
        if line.kind == "key" and not header_done:  # a key right below the first block: the file's header
            header, pending = _clean(pending), []
        header_done = True
        comment = _join(_clean(pending), line.comment)
        pending = []
        if line.kind == "key":
            reader.key(line, comment)
        else:
            reader.header(line, comment)
    if pending and not header_done:
        header = _clean(pending)
    document = _document(text)
    return ScenarioComments(header, reader.steps, reader.expect, _row_names(document, reader.rows),
                            _groups(document), _step_rows(document), frozenset(reader.replaced),
                            _values(document))


def lines_naming(comment: str, word: str) -> list[str]:
    """The lines of a comment that name `word` as a whole word (a call's own line
    in a block that lists several)."""
    pattern = re.compile(rf"(?<![\w]){re.escape(word)}(?![\w])")
    return [line for line in comment.splitlines() if pattern.search(line)]
