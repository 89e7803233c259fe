"""KTAP, as KUnit prints it on the kernel console: a pure parser.

    [    0.670000] KTAP version 1
    [    0.670000] 1..2
    [    0.670000]     KTAP version 1
    [    0.670000]     # Subtest: time32_policy
    [    0.670000]     1..7
    [    0.670000]     ok 1 time32_names_complete
    ...
    [    0.690000]     # old_timex32_round_trip: EXPECTATION FAILED at ...
    [    0.690000]     not ok 5 old_timex32_round_trip
    [    0.680000] ok 1 time32_policy

Lines in, a tree of results out (Document -> Test -> Test ...); it never
reads a file or boots anything (sandbox/kunit.py does). Indentation gives the
nesting: a "KTAP version" or "# Subtest:" line deeper than the current test
opens a subtest, a result line at the current depth closes a case, one at a
shallower depth closes the subtest it ends. Everything else (diagnostics,
kernel messages printed meanwhile, at any depth) is kept as the diagnostics
of the next result, so a failure carries its "Expected ..." lines.

A log that stops early (panic, hang) gives a document whose open tests are
"incomplete" and whose `problems` say what is missing, as kunit_parser.py
(tools/testing/kunit) does for a crashed kernel.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

PASS, FAIL, SKIP, INCOMPLETE = "pass", "fail", "skip", "incomplete"

_TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
_VERSION = re.compile(r"^K?TAP version \d+$")
_SUBTEST = re.compile(r"^# Subtest: (?P<name>.+)$")
_PLAN = re.compile(r"^1\.\.(?P<count>\d+)$")
_RESULT = re.compile(
    r"^(?P<ok>ok|not ok) (?P<number>\d+)(?: -)?(?: (?P<name>[^#]*?))?\s*"
    r"(?:#\s*(?P<directive>\w+)\s*(?P<reason>.*))?$"
)


@dataclass(frozen=True)
class Test:
    """One result line, with its subtests (a suite) or none (a case)."""

    name: str
    number: int
    status: str  # pass, fail, skip or incomplete
    diagnostics: tuple[str, ...] = ()
    subtests: tuple[Test, ...] = ()
    plan: int | None = None
    reason: str = ""  # the SKIP (or TODO) directive's text

    def leaves(self, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Test]]:
        """Every case below this test, with the names leading to it."""
        path = (*prefix, self.name)
        if not self.subtests:
            return [(path, self)]
        return [leaf for sub in self.subtests for leaf in sub.leaves(path)]


@dataclass(frozen=True)
class Document:
    """A whole KTAP run: the top-level tests (KUnit's suites)."""

    tests: tuple[Test, ...]
    plan: int | None
    problems: tuple[str, ...] = ()  # what makes the document incomplete

    @property
    def complete(self) -> bool:
        return not self.problems

    def suite(self, name: str) -> Test | None:
        return next((t for t in self.tests if t.name == name), None)

    def cases(self) -> list[tuple[str, str, Test]]:
        """(suite, case, result) for every case; nested names joined with '.'."""
        return [(path[0], ".".join(path[1:]) or path[0], test)
                for suite in self.tests for path, test in suite.leaves()]


# -- parsing ------------------------------------------------------------------
@dataclass
class _Open:
    """A test whose result line has not come yet."""

    indent: int
    name: str = ""
    plan: int | None = None
    children: list[Test] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # diagnostics for the next result


def _split(line: str) -> tuple[int, str]:
    """(indentation, text) of a console line without its printk timestamp."""
    body = _TIMESTAMP.sub("", line.rstrip("\r\n"))
    text = body.lstrip(" ")
    return len(body) - len(text), text.rstrip()


def _status(match: re.Match[str]) -> str:
    directive = (match["directive"] or "").upper()
    if directive == "SKIP":
        return SKIP
    return PASS if match["ok"] == "ok" else FAIL


def _close(node: _Open, match: re.Match[str] | None) -> Test:
    """The finished test for an open node, from its result line (None: cut off)."""
    status = _status(match) if match else INCOMPLETE
    if status == PASS and any(c.status in (FAIL, INCOMPLETE) for c in node.children):
        status = FAIL  # a suite is no better than its cases, whatever it says
    name = (match["name"] or "").strip() if match else ""
    return Test(name=name or node.name, number=int(match["number"]) if match else 0,
                status=status, diagnostics=tuple(node.pending), subtests=tuple(node.children),
                plan=node.plan, reason=(match["reason"] or "").strip() if match else "")


def _leaf(match: re.Match[str], diagnostics: list[str]) -> Test:
    return Test(name=(match["name"] or "").strip(), number=int(match["number"]),
                status=_status(match), diagnostics=tuple(diagnostics),
                reason=(match["reason"] or "").strip())


def _plan_problems(node: _Open | Test, where: str) -> list[str]:
    children = node.children if isinstance(node, _Open) else node.subtests
    if node.plan is not None and len(children) != node.plan:
        return [f"{where}: planned {node.plan} test(s), got {len(children)}"]
    return []


def parse(lines: list[str]) -> Document | None:
    """The first KTAP document in console lines; None when there is none."""
    split = [_split(line) for line in lines]
    start = next((i for i, (_, text) in enumerate(split) if _VERSION.match(text)), None)
    if start is None:
        return None
    root = _Open(indent=split[start][0])
    stack = [root]
    problems: list[str] = []
    for indent, text in split[start + 1:]:
        _feed(stack, indent, text, problems)
        if len(stack) == 1 and root.plan is not None and len(root.children) >= root.plan:
            break  # the document is whole: what follows is the rest of the boot
    while len(stack) > 1:  # the log stopped inside these
        node = stack.pop()
        finished = _close(node, None)
        problems.append(f"{finished.name or 'a subtest'}: no result line (the log stops inside it)")
        problems += _plan_problems(node, finished.name or "a subtest")
        stack[-1].children.append(finished)
    problems += _plan_problems(root, "the KTAP document")
    return Document(tests=tuple(root.children), plan=root.plan, problems=tuple(problems))


def _feed(stack: list[_Open], indent: int, text: str, problems: list[str]) -> None:
    """One line: open a subtest, name it, plan it, record a result, or keep it."""
    top = stack[-1]
    header = _VERSION.match(text) or _SUBTEST.match(text)
    subtest = _SUBTEST.match(text)
    if header and indent > top.indent:
        stack.append(_Open(indent=indent, name=subtest["name"] if subtest else ""))
    elif header and indent == top.indent and len(stack) > 1 and not top.children:
        top.name = top.name or (subtest["name"] if subtest else "")
    elif (plan := _PLAN.match(text)) and indent == top.indent and top.plan is None:
        top.plan = int(plan["count"])
    elif (result := _RESULT.match(text)) and indent == top.indent:
        top.children.append(_leaf(result, top.pending))
        top.pending = []
    elif (result := _RESULT.match(text)) and indent < top.indent:
        _close_down_to(stack, indent, result, problems)
    elif text:
        top.pending.append(text)


def _close_down_to(stack: list[_Open], indent: int, result: re.Match[str],
                   problems: list[str]) -> None:
    """A result shallower than the open test ends it (and any left open inside)."""
    while len(stack) > 1 and stack[-1].indent > indent:
        node = stack.pop()
        closing = result if stack[-1].indent <= indent else None
        finished = _close(node, closing)
        if closing is None:
            problems.append(f"{finished.name or 'a subtest'}: no result line")
        problems += _plan_problems(node, finished.name or "a subtest")
        stack[-1].children.append(finished)


def parse_text(text: str) -> Document | None:
    return parse(text.splitlines())
