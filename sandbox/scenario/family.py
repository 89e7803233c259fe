"""Scenario families: a file written once that stands for several scenarios.

Three top-level tables, expanded before the scenario is parsed (pure):

    [values]                      # named values
    window = ["2040-01-01T00:00:00Z", "2040-01-01T00:02:00Z"]

    [flavour-groups]              # names for sets of flavours
    time32 = ["time32-syscall", "time32-libc"]

    [[variant]]                   # one scenario per row, in the spirit of
    name = "ext4-128"             # kselftest's FIXTURE_VARIANT; its other keys
    inode-size = 128              # are values, over those of [values]

- A string that is exactly "$name" is replaced by the value (any TOML value:
  a number, a list, a table); "${name}" inside a longer string is replaced by
  the value's text; "$$" is a literal "$", as is any other "$" (a regular
  expression's end of line, a shell's $HOME).
- A flavour group's name may stand wherever a flavour does: in a probe step's
  `flavours` list, and as a key of `expect` or `expect-on.<machine>`. Its
  tables apply to each member; a table written for one member flavour is
  merged over the group's, call by call and field by field.
- A value may hold "$name" references itself (a table of expectations built
  from windows, say): they are replaced in turn, up to MAX_NESTING deep.
- The expansion is counted as it goes: a file whose values expand to more
  than MAX_EXPANDED values in all (seven levels of twelve references each
  would be 35 million) is refused before it fills the memory.
- "${name}" also works inside a table's key (`[step.expect."${old}"]`, a
  userland's name), so a row may name machines and userlands; two keys that
  become one are refused. The text the substitution writes (strings and
  keys) is counted too: past MAX_TEXT characters the file is refused.
- Each variant is its own scenario, named `<scenario>[<variant>]`; its name
  is also the value "$variant". A file without [[variant]] is one scenario.
  A step may be in some rows only (`variants = [...]`) and carry a row's own
  expectations (`[step.expect-variant.<row>...]`): sandbox/scenario/family_rows.py.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from sandbox.base.fields import Where, names, table, type_name
from sandbox.base.machines import FLAVOURS
from sandbox.scenario.family_rows import row_steps

FAMILY_KEYS = ("values", "flavour-groups", "variant")
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
MAX_NESTING = 8  # "$a" whose value holds "$b" whose value holds ...
MAX_EXPANDED = 100_000
"""Values (tables, lists, strings, numbers) the references of a whole file may
bring in; ours bring in a few thousand."""
MAX_TEXT = 4 * 1024 * 1024
"""Characters of text (strings and keys) the substitution may write for a
whole file; ours write about 200,000."""
_REF_RE = re.compile(r"\$(\$|\{([^}]*)\})")


@dataclass(frozen=True)
class Member:
    """One scenario of a family: its variant name ("" for a plain file) and its document."""

    variant: str
    document: dict[str, object]
    step_numbers: tuple[int, ...] = ()  # the file's index of each of its steps (a row may leave some out)


def _name(raw: str, where: Where, what: str) -> str:
    if not _NAME_RE.fullmatch(raw):
        where.fail(f"'{raw}' is not a {what} name (a-z, 0-9, '_', '-')")
    return raw


@dataclass
class _Budget:
    """Values made so far by one file's expansion."""

    made: int = 0
    text: int = 0

    def spend(self, where: Where) -> None:
        self.made += 1
        if self.made > MAX_EXPANDED:
            where.fail(f"the values expand to more than {MAX_EXPANDED} values: "
                       "refer to fewer values, or to values that refer to fewer")

    def write(self, text: str, where: Where) -> str:
        """`text`, counted against MAX_TEXT."""
        self.text += len(text)
        if self.text > MAX_TEXT:
            where.fail(f"the substitution writes more than {MAX_TEXT} characters of text: "
                       "refer to fewer or shorter values")
        return text


def _substitute(raw: object, values: dict[str, object], where: Where, budget: _Budget,
                depth: int = 0) -> object:
    """The value with every "$name" and "${name}" replaced; a value that is
    itself a table or list may refer to other values, MAX_NESTING deep.
    What a reference brings in (depth > 0) is counted against the budget;
    the file's own values are bounded by its size already."""
    if depth:
        budget.spend(where)
    if isinstance(raw, dict):
        return _substitute_table(raw, values, where, budget, depth)
    if isinstance(raw, list):
        return [_substitute(item, values, where.item(i), budget, depth) for i, item in enumerate(raw)]
    if not isinstance(raw, str):
        return raw
    if "$" not in raw:
        return budget.write(raw, where) if depth else raw
    if raw.startswith("$") and _NAME_RE.fullmatch(raw[1:]):
        if raw[1:] not in values:
            where.fail(f"unknown value '{raw[1:]}' (known: {', '.join(values) or 'none'})")
        if depth >= MAX_NESTING:
            where.fail(f"value '{raw[1:]}': values refer to values more than {MAX_NESTING} deep (a loop?)")
        return _substitute(values[raw[1:]], values, where, budget, depth + 1)

    def text(match: re.Match[str]) -> str:
        if match.group(1) == "$":
            return "$"
        name = match.group(2)
        if name not in values:
            where.fail(f"unknown value '{name}' (known: {', '.join(values) or 'none'})")
        value = values[name]
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            where.fail(f"value '{name}' is {type_name(value)}; only a string or a number goes inside text")
        return str(value)
    return budget.write(_REF_RE.sub(text, raw), where)


def _substitute_table(raw: dict[str, object], values: dict[str, object], where: Where, budget: _Budget,
                      depth: int) -> dict[str, object]:
    """A table with "${name}" replaced in its keys as in its values; two keys
    that become one are refused."""
    table: dict[str, object] = {}
    for key, item in raw.items():
        name = _substitute(key, values, where.at(key), budget, depth) if "$" in key else key
        if not isinstance(name, str):
            where.at(key).fail(f"a key must be text: '{key}' stands for {type_name(name)}")
        if name in table:
            where.at(key).fail(f"key '{name}' twice once the values are in")
        table[name] = _substitute(item, values, where.at(key), budget, depth)
    return table


def _groups(raw: object, where: Where) -> dict[str, tuple[str, ...]]:
    groups = {}
    for name, members in table(raw, where).items():
        _name(name, where.at(name), "flavour group")
        if name in FLAVOURS:
            where.at(name).fail(f"'{name}' is a flavour; a group needs a name of its own")
        groups[name] = names(members, where.at(name), FLAVOURS, "flavour")
    return groups


def _merge(base: object, over: object) -> object:
    """`over` merged into `base`, table by table; anything else is replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = _merge(merged[key], value) if key in merged else value
        return merged
    return over


def _expand_expect(raw: object, groups: dict[str, tuple[str, ...]]) -> object:
    """{group: tables, flavour: tables} -> {flavour: tables}: groups first, in
    order, then each flavour's own tables over them."""
    if not isinstance(raw, dict):
        return raw
    expanded: dict[str, object] = {}
    for key, tables in raw.items():
        for flavour in groups.get(key, ()):
            expanded[flavour] = _merge(expanded.get(flavour, {}), copy.deepcopy(tables))
    for key, tables in raw.items():
        if key not in groups:
            expanded[key] = _merge(expanded[key], tables) if key in expanded else tables
    return expanded


def _expand_step(step: object, groups: dict[str, tuple[str, ...]]) -> object:
    if not isinstance(step, dict):
        return step
    step = dict(step)
    if isinstance(step.get("flavours"), list):
        listed: list[object] = []  # a non-string item is kept, for the parser to name
        for item in step["flavours"]:
            for flavour in groups.get(item, (item,)) if isinstance(item, str) else (item,):
                if flavour not in listed:
                    listed.append(flavour)
        step["flavours"] = listed
    if "expect" in step:
        step["expect"] = _expand_expect(step["expect"], groups)
    if isinstance(step.get("expect-on"), dict):
        step["expect-on"] = {m: _expand_expect(t, groups) for m, t in step["expect-on"].items()}
    return step


def _variants(raw: object, where: Where) -> list[tuple[str, dict[str, object]]]:
    if not isinstance(raw, list) or not raw:
        where.fail("expected one or more [[variant]] tables")
    rows: list[tuple[str, dict[str, object]]] = []
    for index, item in enumerate(raw):
        row = dict(table(item, where.item(index)))
        if "variant" in row:
            where.item(index).at("variant").fail("'variant' is the row's name; use another key")
        name = row.pop("name", None)
        if not isinstance(name, str):
            where.item(index).at("name").fail("missing (required): the variant's name, a-z, 0-9, '_', '-'")
        _name(name, where.item(index).at("name"), "variant")
        if name in [n for n, _ in rows]:
            where.item(index).at("name").fail(f"variant '{name}' listed twice")
        rows.append((name, row))
    return rows


def expand(document: dict[str, object], where: Where) -> list[Member]:
    """The scenarios a document stands for, each without the family tables."""
    plain = {key: value for key, value in document.items() if key not in FAMILY_KEYS}
    values = dict(table(document.get("values", {}), where.at("values")))
    for name in values:
        _name(name, where.at("values").at(name), "value")
    groups = _groups(document.get("flavour-groups", {}), where.at("flavour-groups"))
    rows = _variants(document["variant"], where.at("variant")) if "variant" in document else [("", {})]
    members, budget = [], _Budget()
    for variant, row in rows:
        scope: dict[str, object] = {**values, **row, "variant": variant} if variant else {**values, **row}
        expanded = _substitute(plain, scope, where, budget)
        assert isinstance(expanded, dict)
        numbered: list[tuple[int, object]] = []
        if isinstance(expanded.get("step"), list):
            numbered = row_steps(expanded["step"], variant, [n for n, _ in rows if n], where.at("step"),
                                 lambda raw: _expand_expect(raw, groups))
            expanded["step"] = [_expand_step(step, groups) for _, step in numbered]
        members.append(Member(variant, expanded, tuple(n for n, _ in numbered)))
    return members
