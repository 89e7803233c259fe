"""A family's steps for one [[variant]] row (pure): the steps of the row, each
with the row's own expectations over the shared ones.

    [[step]]
    phase = "faked-2106-clock"
    variants = ["i386"]               # this step is in these rows only

    [step.expect.time64]              # every row's
    time = { seconds = -1 }

    [step.expect-variant.armhf.time64]
    time = { errno = "ENOSYS" }       # the armhf row's, instead

A row's table replaces the shared one for what it names: in a probe step a
flavour's call (`expect-variant.<row>.<flavour>.<call>`), elsewhere a
userland's whole table (`expect-variant.<row>.<userland>`), as
`expect-on.<machine>` does for a machine. `<flavour>` may be a flavour group.
Both keys are gone from the steps the parser sees.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from sandbox.base.errors import InputError
from sandbox.base.fields import Where, table, type_name

ROWS_KEY = "variants"
EXPECT_VARIANT = "expect-variant"
REPLACED_AT: dict[str, int] = {"probe": 2}
"""How deep a row's table replaces the shared one, by the step's action:
a probe's flavour.call; any other step's userland (1)."""

Expander = Callable[[object], object]


def _rows_of(raw: object, rows: list[str], where: Where) -> list[str]:
    if not rows:
        where.fail("only a family's steps name rows: this file has no [[variant]]")
    if not isinstance(raw, list) or not raw:
        where.fail(f"expected a list of [[variant]] names, got {type_name(raw)}")
    for index, name in enumerate(raw):
        if name not in rows:
            where.item(index).fail(f"unknown variant {name!r} (known: {', '.join(rows)})")
    return [str(name) for name in raw]


def _replace(base: object, own: object, depth: int) -> object:
    """`own` over `base`: tables merged key by key down to `depth`, where
    `own`'s value replaces `base`'s whole."""
    if depth == 0 or not isinstance(base, dict) or not isinstance(own, dict):
        return own
    merged = dict(base)
    for key, value in own.items():
        merged[key] = _replace(merged[key], value, depth - 1) if key in merged else value
    return merged


def _own_expect(step: dict[str, object], variant: str, rows: list[str], where: Where,
                expand: Expander) -> None:
    """The row's `expect-variant` table put over the step's `expect`, in place."""
    own = table(step.pop(EXPECT_VARIANT), where)
    if not rows:
        where.fail("only a family's steps name rows: this file has no [[variant]]")
    for name in own:
        if name not in rows:
            where.at(name).fail(f"unknown variant {name!r} (known: {', '.join(rows)})")
    if variant not in own:
        return
    depth = next((d for action, d in REPLACED_AT.items() if action in step), 1)
    shared = expand(step.get("expect", {}))
    step["expect"] = _replace(shared, expand(table(own[variant], where.at(variant))), depth)


def row_steps(steps: list[object], variant: str, rows: list[str], where: Where,
              expand: Expander) -> list[tuple[int, object]]:
    """The steps of row `variant` ("" for a plain file) among `rows`, the
    names of every row, each with its index in the file; `expand` turns
    flavour groups into flavours."""
    kept: list[tuple[int, object]] = []
    for index, raw in enumerate(steps):
        if not isinstance(raw, dict):
            kept.append((index, raw))  # the parser names it
            continue
        step = dict(raw)
        if ROWS_KEY in step and variant not in _rows_of(step.pop(ROWS_KEY), rows, where.item(index).at(ROWS_KEY)):
            continue
        if EXPECT_VARIANT in step:
            _own_expect(step, variant, rows, where.item(index).at(EXPECT_VARIANT), expand)
        kept.append((index, step))
    return kept


_STEP_KEY = re.compile(r"^step\[(\d+)\]")


def in_file_terms(error: InputError, numbers: tuple[int, ...]) -> InputError:
    """An error about a row's step named by the step's index in the file
    (`numbers`: the file's index of each of the row's steps)."""
    found = _STEP_KEY.match(error.key)
    if not found or int(found.group(1)) >= len(numbers) or numbers[int(found.group(1))] == int(found.group(1)):
        return error
    return InputError(error.file, f"step[{numbers[int(found.group(1))]}]{error.key[found.end():]}", error.message)
