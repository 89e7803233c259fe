"""`just reliability`, its first measurement: malformed (and borderline valid)
scenario files, each given to `python -m sandbox validate` (or `run`) in a
process of its own; sandbox/app/reliability.py renders the table.

A bad file's right outcome is a one-line error (exit 2, one line besides
`==>` progress, no control character); accepting it is a false pass. A
valid file (Case.valid) must be accepted. Else: a traceback, a hang, other.
"""
from __future__ import annotations

import concurrent.futures
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox.base import paths
from sandbox.scenario import suite

BASE = (paths.SCENARIOS / "guide" / "clock-2040.toml").read_text()
"""The seed of most malformed files: the authoring guide's example."""
VALIDATE_SECONDS = 60.0
"""A file that takes longer hangs; generous, as a shared machine at a load of 20 takes 5 s to start Python."""

Make = Callable[[Path], Path]
"""Writes one malformed file (or makes a special one) in a folder; returns its path."""


@dataclass(frozen=True)
class Case:
    """One file tried: refused with one line unless `valid`; `verb` is the
    command it is given to (validate, or run for what only a run can see)."""

    group: str
    name: str
    make: Make
    valid: bool = False
    verb: tuple[str, ...] = ("validate",)


def _text(name: str, text: str | bytes) -> Make:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return path
    return make


def _top(key: str, value: str) -> str:
    """BASE with a top-level key set (before the first table)."""
    lines = [line for line in BASE.splitlines() if not line.startswith(f"{key} =")]
    return f"{key} = {value}\n" + "\n".join(lines) + "\n"


def _replace(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _special(name: str, make: Callable[[Path], None]) -> Make:
    def special(folder: Path) -> Path:
        path = folder / name
        make(path)
        return path
    return special


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))  # left bound: the file stays a socket


def _loop(path: Path) -> None:
    path.symlink_to(path.with_name("loop-b.toml"))
    path.with_name("loop-b.toml").symlink_to(path)


def _link(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


def _directory(path: Path) -> None:
    path.mkdir()


SET_CLOCK = 'set-clock = "2040-01-01T00:00:00Z"'
SET_CLOCK_STEP = f'{SET_CLOCK}\nvia = "clock_settime"'
"""The guide's whole first step: a wait replaces it, `via` and all (until
2026-12-06 the `via` line stayed, and every wait row failed on it)."""
WINDOW = 'seconds = { between = ["2040-01-01T00:00:00Z", "2040-01-01T00:02:00Z"] }'
PROBE = 'phase = "in-2040"\nprobe = "clock"'


def malformed() -> list[Case]:
    """Every malformed (and borderline valid) file tried."""
    cases: list[Case] = []

    def add(group: str, name: str, text: str | bytes, valid: bool = False,
            verb: tuple[str, ...] = ("validate",)) -> None:
        cases.append(Case(group, name, _text(f"{group}-{len(cases)}.toml", text), valid, verb))
    for value in ("inf", "nan", "-inf", "1e30", "0", "-5", '"60"', "[60]", "{ a = 1 }", "true", "7201"):
        add("timeout", f"timeout = {value}", _top("timeout", value))
    for value in ('"0000-01-01T00:00:00Z"', '"99999-01-01T00:00:00Z"', '"2100-01-01T00:00:00Z"',
                  '"1969-12-31T23:59:59Z"', '"2038-01-19T03:14:08"', '"2038-02-30T00:00:00Z"', "5", '""', '"now"'):
        add("rtc", f"rtc = {value}", _top("rtc", value))
    for value in ('"0000-01-01T00:00:00Z"', '"99999-01-01T00:00:00Z"', '"2232-04-18T23:47:16Z"',
                  '"2262-04-12T00:00:00Z"', '"1969-12-31T23:59:59Z"', "-1", '"2040-13-01T00:00:00Z"'):
        add("set-clock", f"set-clock = {value}", _replace(SET_CLOCK, f"set-clock = {value}"))
    for value in ('"0000-01-01T00:00:00Z"', '"3000-01-01T00:00:00Z"'):
        add("reset-clock", f"reset-clock = {value}", _replace(PROBE, f"{PROBE}\nreset-clock = {value}"))
    x86_64 = _top("machines", '["x86_64"]')
    for value in ('faketime = "next tuesday"', 'faketime = "+12y"', 'userland = "nope"\nfaketime = "+12y"',
                  'userland = "debian12-armhf"', 'userland = "debian12-amd64"\nlinkage = "shared"',
                  'userland = "debian12-amd64"\nflavours = ["time64"]'):
        add("faketime", value.replace("\n", ", "), _replace(PROBE, f"{PROBE}\n{value}", x86_64))
    for value in ("0", "-1", "nan", "inf", "1e30", "2592001"):
        add("wait", f"wait = {value}", _replace(SET_CLOCK_STEP, f"wait = {value}"))
    for value in ("3601", "200", "86400"):  # valid: time warp passes them in guest time
        add("wait", f"wait = {value}", _replace(SET_CLOCK_STEP, f"wait = {value}"), valid=True)
    add("wait", "wait = 200, warp = false (timeout 120)", _replace(SET_CLOCK_STEP, "wait = 200", _top("warp", "false")))
    for value in ('"panic=0"', '"console=ttyS1"', '"init=/bin/sh"', '"rdinit=/x"', '"y2038.agent=ttyS0"', '"--"',
                  '"a b"', '"x\\"y"', "5", '"$(reboot)"'):
        add("kernel-args", f"kernel-args = [{value}]", _top("kernel-args", f"[{value}]"))
    for value in ('"\\u001b[2J"', '"bell \\u0007"', '"bidi \\u202e"', '""', "5", '"a\\nb"'):
        add("title", f"title = {value}", _top("title", value))
    for value in ('"\\u001b[31m red"', "3"):
        add("description", f"description = {value}", _top("description", value))
    add("keys", "a top-level key with ESC", _top('"k\\u001b[2J"', "1"))
    add("keys", "a step key with ESC", _replace(SET_CLOCK, f'{SET_CLOCK}\n"v\\u001bia" = 1'))
    add("keys", "an expectation key with C1", _replace(WINDOW, f'{WINDOW}\n"n\\u009bsec" = 1'))
    for value in ('{ between = [nan, 1] }', '{ between = [0, inf] }',
                  '{ between = ["0000-01-01T00:00:00Z", "2040-01-01T00:00:00Z"] }', '"99999-01-01T00:00:00Z"',
                  '{ betwen = [1, 2] }', '{ wrapped = [1, 2] }', '{ elapsed = [-1, 2] }', '{ clamped = "x" }',
                  '{ between = [2, 1] }'):
        add("expectation", f"seconds = {value}", _replace(WINDOW, f"seconds = {value}"))
    add("expectation", "errno = \"EFOO\"", _replace(WINDOW, 'errno = "EFOO"'))
    add("expectation", "an unknown field", _replace(WINDOW, "colour = 1"))
    add("expectation", "an unknown call", _replace("[step.expect.time64.clock_gettime]", "[step.expect.time64.nope]"))
    add("expectation", "an unknown flavour", _replace("[step.expect.time64.clock_gettime]",
                                                      "[step.expect.time99.clock_gettime]"))
    head = BASE.split("[[step]]")[0]
    add("steps", "no step", head)
    add("steps", "step = []", head + "step = []\n")
    add("steps", "two actions", _replace(SET_CLOCK, f"{SET_CLOCK}\nwait = 1"))
    add("steps", "no action", _replace(SET_CLOCK, 'phase = "x"'))
    add("steps", "an unknown probe", _replace('probe = "clock"', 'probe = "nope"'))
    add("steps", "a phase twice", BASE + f"\n[[step]]\n{PROBE}\n")
    add("steps", "phase = \"a b\"", _replace('phase = "in-2040"', 'phase = "a b"'))
    for value in ("[]", "[1]", '[["time64"]]'):
        add("steps", f"flavours = {value}", _replace(PROBE, f"{PROBE}\nflavours = {value}"))
    for value in ("[]", '["vax"]', '"x86_64"', "[1]"):
        add("machines", f"machines = {value}", _top("machines", value))
    for value in ('"mainline"', "5"):
        add("kernel", f"kernel = {value}", _top("kernel", value))
    steps = "[[step]]" + BASE.split("[[step]]", 1)[1]
    for disk in ('name = "d"\nfs = "ext4"\nsize-mib = 1e30', 'name = "d"\nfs = "ntfs"',
                 'name = "../x"\nfs = "tmpfs"', 'name = "d"\nfs = "ext4"\ninode-size = 100'):
        add("disk", "[[disk]] " + disk.replace("\n", ", "), head + f"[[disk]]\n{disk}\n" + steps)
    for value in ('["panic"]', '"warning"', '["nope"]'):
        add("expect-kernel", f"expect-kernel = {value}", _top("expect-kernel", value))
    add("family", "an unknown $value", _replace('"2040-01-01T00:00:00Z"', '"$nope"'))
    add("family", "a [[variant]] without a name", BASE + '\n[[variant]]\nx = 1\n')
    add("family", "an unknown ${value} inside text", _replace('title = "', 'title = "${nope} '))
    add("family", "a flavour group named as a flavour", '[flavour-groups]\ntime64 = ["time32-libc"]\n' + BASE)
    add("nesting", "5000 nested arrays", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    add("nesting", "2000 nested inline tables", "a = " + "{ b = " * 2000 + "1" + " }" * 2000 + "\n")
    add("nesting", "a dotted key 100 deep", "a." + ".".join(["b"] * 100) + " = 1\n")
    add("nesting", "40 nested arrays", "a = " + "[" * 40 + "]" * 40 + "\n")
    add("encoding", "Latin-1 bytes", BASE.encode().replace(b"clock_settime()", b"clock_settime\xe9"))
    add("encoding", "UTF-16 with a BOM", BASE.encode("utf-16"))
    add("encoding", "NUL bytes", BASE.encode() + b"\x00\x00")
    add("encoding", "an empty file", b"")
    add("encoding", "4 KiB of random bytes", random.Random(2038).randbytes(4096))
    add("encoding", "2 MiB of comment", "# " + "x" * (2 << 20) + "\n")
    for name, make in (("a FIFO with no writer", _fifo), ("a UNIX socket", _socket), ("a directory", _directory),
                       ("a symlink loop", _loop), ("a dangling symlink", _link("/nonexistent/x.toml")),
                       ("a symlink to /dev/zero", _link("/dev/zero")),
                       ("a symlink to /dev/urandom", _link("/dev/urandom"))):
        cases.append(Case("special file", name, _special(f"special-{len(cases)}.toml", make)))
    cases.append(Case("special file", "/dev/zero", lambda folder: Path("/dev/zero")))
    cases.append(Case("name", "a name with ESC [2J", _text("x\x1b[2Jy.toml", "= broken")))
    cases.append(Case("name", "a name with a newline", _text("two\nlines.toml", "= broken")))
    cases.append(Case("name", "a missing file", lambda folder: folder / "missing.toml"))
    cases.append(Case("name", "a [variant] the file lacks", lambda folder: Path(
        str(paths.SCENARIOS / "filetimes" / "filesystems.toml") + "[nope]")))
    for index, path in enumerate(suite.scenario_files()[:5]):
        text = path.read_text()
        add("syntax", f"{path.relative_to(paths.SCENARIOS)} cut mid-string",
            text[:len(text) // 2] + '\nx = "unterminated\n')
    add("syntax", "a key twice", _top("title", '"again"') + 'title = "twice"\n')
    add("syntax", "a bad escape", _top("title", '"\\q"'))
    cases += honest_verdict_cases()
    return cases


def _family_bomb(levels: int = 7, references: int = 12) -> str:
    """The small file of the honest-verdicts review: seven levels of [values], twelve references each
    (35.8 million leaves once expanded)."""
    names = [chr(ord("a") + i) for i in range(levels)]
    values = "".join(f'{n} = [{", ".join([chr(34) + "$" + names[i + 1] + chr(34)] * references)}]\n'
                     if i + 1 < levels else f'{n} = [{", ".join(["1"] * references)}]\n'
                     for i, n in enumerate(names))
    return _top("kernel-args", '"$a"') + "[values]\n" + values


def _run_step(pattern_key: str, pattern: str) -> str:
    step = ('[[step]]\nphase = "r"\nrun = ["date", "+%s"]\nuserlands = ["debian12-amd64"]\n'
            f'{pattern_key} = {pattern}\n[step.expect.debian12-amd64.date]\nexit = 0\n')
    return _top("machines", '["x86_64"]') + "\n" + step


def honest_verdict_cases() -> list[Case]:
    """The files of the honest-verdicts review: runs that would pass without testing, input that
    kept the host busy, crashes, budgets, times, names."""
    cases: list[Case] = []

    def add(group: str, name: str, text: str | bytes, valid: bool = False,
            verb: tuple[str, ...] = ("validate",)) -> None:
        cases.append(Case(group, name, _text(f"i36-{group}-{len(cases)}.toml", text), valid, verb))
    head, steps = BASE.split("[[step]]", 1)[0], "[[step]]" + BASE.split("[[step]]", 1)[1]
    add("nothing tested", "a probe step without expectations", head + f"[[step]]\n{PROBE}\n")
    add("nothing tested", "a file with only a wait", head + "[[step]]\nwait = 5\n")
    add("nothing tested", "expectations only for native64, on i386", _top("machines", '["i386"]').split("[[step]]")[0]
        + f'[[step]]\n{PROBE}\n[step.expect.native64.clock_gettime]\nerrno = "none"\n')
    add("nothing tested", "an expectation on a call the args leave out",
        _replace(PROBE, f'{PROBE}\nargs = ["time"]'))
    add("nothing tested", "a file for armhf only, run with --machine x86_64", _top("machines", '["armhf"]'),
        verb=("run", "--machine", "x86_64"))
    family = _family_bomb()
    add("bounded work", f"{len(family.encode())} bytes: 7 levels of [values], 12 references each", family)
    for key, value in (("matches", '"a{4294967296}"'), ("matches", '"' + "(" * 5000 + ")" * 5000 + '"'),
                       ("matches", '"' + "(" * 17 + "a" + ")" * 17 + '"'), ("matches", '"(unclosed"')):
        add("bounded work", f"{key} = {value[:24]}{'...' if len(value) > 24 else ''}",
            _replace(WINDOW, f"{WINDOW}\n[step.expect.time64.time]\nabsent = {{ {key} = {value} }}"))
    add("bounded work", 'matches = "^(0|00)+x" (valid: judged under a time limit)',
        _replace(WINDOW, f'{WINDOW}\n[step.expect.time64.time]\nabsent = {{ matches = "^(0|00)+x" }}'), valid=True)
    for value in ('"a{4294967296}"', '"' + "(" * 5000 + ")" * 5000 + '"'):
        add("bounded work", f"time-pattern = {value[:24]}{'...' if len(value) > 24 else ''}",
            _run_step("time-pattern", value))
    add("budget", "20,000 one-second waits (time warp)", head + "[[step]]\nwait = 1\n" * 20_000 + steps)
    add("budget", "a 6 h wait, --warp off", _replace(SET_CLOCK_STEP, "wait = 21600"),
        verb=("run", "--warp", "off"))
    add("budget", "a 6 h wait (valid under time warp)", _replace(SET_CLOCK_STEP, "wait = 21600"), valid=True)
    add("times", "fullwidth digits in rtc", _top("rtc", '"２０３８-01-19T03:00:00Z"'))
    add("times", "a TOML local date-time (no Z)", _top("rtc", "2038-01-19T03:00:00"))
    add("times", "a TOML date-time at +01:00", _top("rtc", "2038-01-19T04:00:00+01:00"))
    add("times", "a 5,000-digit year", _top("rtc", '"' + "2" * 5000 + '-01-19T03:00:00Z"'))
    add("times", "a 5,000-digit number", _top("timeout", "2" * 5000))
    add("long values", "a 900 KB title", _top("title", '"' + "t" * 900_000 + '"'), valid=True)
    return cases


@dataclass(frozen=True)
class FileOutcome:
    group: str
    name: str
    outcome: str  # OUTCOMES
    line: str  # what the user saw (the error line, shortened)


OUTCOMES = ("one-line error", "accepted", "false pass", "traceback", "hang", "other")
"""A bad file: a one-line error is right, an acceptance a false pass. A valid
file (Case.valid): accepted is right, a refusal "other"."""


def _given(repo: Path, case: Case, path: Path, results: Path) -> tuple[int, str] | None:
    """The verb of `repo`'s code given one file, in a session of its own (all
    of it killed at the limit, never left running); None if it did not answer."""
    env = dict(os.environ, PYTHONPATH=str(repo), Y2038_RESULTS=str(results))
    if repo != paths.REPO:  # another commit's code: never a build in the shared cache
        env["Y2038_CACHE"] = str(results / "empty-cache")
    proc = subprocess.Popen([sys.executable, "-m", "sandbox", *case.verb, str(path)], env=env, cwd=repo,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=VALIDATE_SECONDS)
        return proc.returncode, err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _try(case: Case, path: Path, results: Path, repo: Path = paths.REPO) -> FileOutcome:
    group, name = case.group, case.name
    answer = _given(repo, case, path, results)
    if answer is None:
        return FileOutcome(group, name, "hang", f"no answer within {VALIDATE_SECONDS:.0f} s")
    code, err = answer
    lines = [line for line in err.strip().splitlines() if not line.startswith("==> ")]  # progress lines
    if "Traceback" in err:
        return FileOutcome(group, name, "traceback", lines[-1] if lines else "")
    if code == 0:
        last = err.strip().splitlines()[-1] if err.strip() else ""
        return FileOutcome(group, name, "accepted" if case.valid else "false pass", last)
    clean = not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in "".join(lines))
    if code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and clean and not case.valid:
        return FileOutcome(group, name, "one-line error", lines[0])
    return FileOutcome(group, name, "other", f"exit {code}: {err.strip()[:80]!r}")


def try_malformed(folder: Path, repo: Path = paths.REPO) -> list[FileOutcome]:
    """Every case given to `repo`'s code (this tree's unless told)."""
    folder.mkdir(parents=True, exist_ok=True)
    cases = [(case, case.make(folder)) for case in malformed()]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda item: _try(item[0], item[1], folder / "results", repo), cases))
