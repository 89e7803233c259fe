"""`just reliability`: figures of how the sandbox takes hostile or careless use
(issues 14 and 36), measured, not asserted; docs/reliability.md keeps the output.

1. Malformed scenario files (sandbox/app/reliability_files.py): each given
   to `python -m sandbox validate` (or `run`, for what only a run refuses: a
   file for another machine, `--warp off`) in a process of its own
   (VALIDATE_SECONDS limit). A bad file's right
   outcome is a one-line error (exit 2, one line besides `==>` progress, no
   control character); accepting it is a false pass. A valid file (a long
   wait under time warp, a pattern that backtracks, which the judge bounds)
   must be accepted. Else: a traceback, a hang, other.
2. Signals x targets: a scenario that waits in the guest is run through
   `just run`; once the guest has answered, SIGINT, SIGTERM or SIGHUP goes to
   `just` (the command on PATH), the just binary (when that command is the
   npm wrapper), the Python process, or the whole process group; and SIGKILL
   to `just` and to Python. Counted: QEMU processes of the run left 2 s later
   (goal 0), seconds until the last was gone, whether run.json and report.txt
   were kept and what run.json says.
3. Kernel findings: for each kind of klog's table, a console line of that
   kind, and what it does to a run (fails it as judged, or ends it).
4. Runs that must test what they pass (boot x86_64): a probe given 100,000
   arguments (the most a 1 MiB scenario file holds) must run every one and
   judge its expectation, or fail its step; a run that exits 0 having judged
   no expectation or observed nothing is a false pass.
5. Judging, bounded: a `matches` that backtracks without end on 60 zeros, a
   judging past its deadline.

Long because each measurement has its own set-up and its own table; they
share the rendering and nothing else.

The signal trials and the runs boot x86_64 (about 5 s each); `--no-boot` skips them.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sandbox.app import reliability_evidence
from sandbox.app import reliability_deaths
from sandbox.app.reliability_files import BASE, OUTCOMES, PROBE, FileOutcome, try_malformed
from sandbox.app.reliability_sections import Measure, Tally, measure_all
from sandbox.base import evidence as files
from sandbox.base import paths
from sandbox.base.errors import InputError, SandboxError
from sandbox.base.progress import say
from sandbox.guest import klog, privileges
from sandbox.guest.qemu import GuestDied, GuestHung
from sandbox.judge.evaluate import JUDGE_SECONDS, evaluate
from sandbox.run.observations import Observation
from sandbox.run.runner import classify
from sandbox.scenario import suite
from sandbox.scenario.parser import parse_scenario

WHAT = "`just reliability`: hostile or careless use, measured"

SECTIONS: list[tuple[str, Measure]] = [
    # (name, measure) of each subject's module (sandbox/app/reliability_sections.py), one line each
    ("evidence", reliability_evidence.measure),
    ("deaths", reliability_deaths.measure),
]

# --------------------------------------------------------------------------
# 2. Signals.


SLOW = """\
title = "a guest that waits, to be interrupted"
rtc = "2038-01-19T03:13:50Z"
machines = ["x86_64"]
timeout = 60
# The wait must take wall time for the signal to land in it: no time warp.
warp = false

[[step]]
phase = "before"
probe = "clock"
flavours = ["time64"]

[step.expect.time64.clock_gettime]
errno = "none"

[[step]]
wait = {wait}
"""
TARGETS = ("just", "just binary", "python", "process group")
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
KILLS = (("just", signal.SIGKILL), ("python", signal.SIGKILL))
"""SIGKILL to the `just` wrapper (Python sees it gone: sandbox/app/lifeline.py)
and to Python itself (QEMU dies with it: PR_SET_PDEATHSIG; no run.json)."""


@dataclass(frozen=True)
class SignalTrial:
    target: str
    signal: str
    qemu_left: int  # QEMU processes of the run 2 s after the signal
    gone_after: float | None  # seconds until the last one was gone (None: still there)
    outcome: str  # what run.json says ("" when there is none)
    report_kept: bool  # report.txt written
    exit_code: int | None  # of the `just` command
    note: str = ""
    qemu_capeff: str = ""  # QEMU's effective capabilities while the guest waits (/proc/<pid>/status)

    @property
    def evidence_kept(self) -> bool:
        return bool(self.outcome) and self.report_kept


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace").split("\0")
    except OSError:
        return []


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def qemu_of(results: Path) -> list[int]:
    """The QEMU processes whose command line names this results folder."""
    return [pid for pid in _pids()
            if (argv := _cmdline(pid)) and argv[0].startswith("qemu-system") and str(results) in " ".join(argv)]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        for child in _children(pending.pop()):
            found.append(child)
            pending.append(child)
    return found


def _wait_for(condition: Callable[[], object], seconds: float, step: float = 0.02) -> object:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


def signal_trial(target: str, signum: int, folder: Path, wait: int = 20) -> SignalTrial:
    """Run a waiting scenario through `just run` in its own session, signal
    `target` once the guest has answered, and see what is left."""
    just = shutil.which("just")
    if just is None:
        raise SandboxError("`just` is not installed (npm install -g rust-just)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "slow.toml").write_text(SLOW.format(wait=wait))
    results = folder / "results"
    env = dict(os.environ, Y2038_RESULTS=str(results))
    proc = subprocess.Popen([just, "--justfile", str(paths.REPO / "justfile"), "--working-directory", str(folder),
                             "run", "slow.toml"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def answered() -> bool:  # the probe's reply is in: the guest is in its wait
            return any("@@Y2038 END 1 " in log.read_text("utf-8", "replace")
                       for log in results.glob(f"*/*/*/{files.AGENT_LOG}"))
        if not _wait_for(answered, 120, 0.1):
            raise SandboxError(f"{target}/{signal.Signals(signum).name}: the guest never answered "
                               f"(see {results})")
        time.sleep(0.3)
        capeff = ",".join(f"{privileges.effective(pid) or 0:016x}" for pid in qemu_of(results))
        tree = _descendants(proc.pid)
        # the Python doing the work: the last (under sandbox/app/supervisor.py's parent, the child)
        python = [p for p in tree if "sandbox" in _cmdline(p) and "run" in _cmdline(p)][-1]
        binary = next((p for p in [proc.pid, *tree] if Path(_cmdline(p)[0]).name == "just"
                       and _cmdline(p)[0] != "node"), proc.pid)
        pid = {"just": proc.pid, "just binary": binary, "python": python}.get(target)
        sent = time.monotonic()
        if pid is None:
            os.killpg(proc.pid, signum)
        else:
            os.kill(pid, signum)
        gone = _wait_for(lambda: not qemu_of(results), 2.0)
        gone_after = time.monotonic() - sent if gone else None
        left = len(qemu_of(results))
        try:
            code: int | None = proc.wait(wait + 30)
        except subprocess.TimeoutExpired:
            code = None
        _wait_for(lambda: not _alive(python), wait + 30)  # the wrapper may die before Python has written
        if gone_after is None:
            _wait_for(lambda: not qemu_of(results), wait + 30)
            gone_after = time.monotonic() - sent if not qemu_of(results) else None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    runs = list(results.glob(f"*/*/*/{files.RUN}"))
    outcome = files.state_of(json.loads(runs[0].read_text())) if runs else ""  # killed: still "running"
    report = bool(runs) and (runs[0].parent / files.REPORT).is_file()
    note = "" if pid != binary or binary != proc.pid else "the command on PATH is the just binary"
    return SignalTrial(target, signal.Signals(signum).name, left, gone_after, outcome, report, code, note, capeff)

# --------------------------------------------------------------------------
# 3. Kernel findings.


FINDING_LINES = {
    "panic": "[    5.000000] Kernel panic - not syncing: sysrq triggered crash",
    "oops": "[    5.000000] Oops: 0002 [#1] PREEMPT SMP NOPTI",
    "kasan": "[    5.000000] BUG: KASAN: slab-out-of-bounds in ktime_get_real_ts64+0x2c/0x90",
    "ubsan": "[    5.000000] UBSAN: shift-out-of-bounds in kernel/time/time.c:802:14",
    "bug": "[    5.000000] BUG: sleeping function called from invalid context at kernel/time/timer.c:1",
    "warning": "[    5.000000] WARNING: CPU: 0 PID: 93 at kernel/time/timekeeping.c:1331 do_settimeofday64+0x1c3/0x1e0",
    "hung-task": "[  125.000000] INFO: task clock:93 blocked for more than 120 seconds.",
    "rcu-stall": "[   30.000000] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:",
}
ECHO = "[    0.000000] Kernel command line: console=ttyS0 panic=-1 y2038.agent=ttyS1 Kernel panic - not syncing"
PLAIN = """\
title = "no expectations: only the kernel log decides"
rtc = "2038-01-19T03:13:50Z"
machines = ["x86_64"]
{extra}
[[step]]
phase = "p"
probe = "clock"
"""


@dataclass(frozen=True)
class FindingOutcome:
    kind: str
    line: str
    effect: str


def finding_effects() -> list[FindingOutcome]:
    """What one console line of each kind does to a run."""
    plain = parse_scenario(PLAIN.format(extra=""), "kernel-findings.toml", suite.catalogue(),
                           suite.machine_flavours())
    effects = []
    for kind, line in [*FINDING_LINES.items(), ("(command-line echo)", ECHO)]:
        findings = tuple(klog.scan([line]))
        if any(f.kind in klog.FATAL for f in findings):
            outcome, _ = classify(GuestDied("QEMU exited"), findings)
            hung, _ = classify(GuestHung("no answer"), findings)
            effect = f"ends the run at once: outcome {outcome} (also when the agent hung: {hung}), exit 3"
        else:
            result = evaluate(plain, "x86_64", (), findings)
            expecting = parse_scenario(PLAIN.format(extra=f'expect-kernel = ["{kind}"]'), "k.toml",
                                       suite.catalogue(), suite.machine_flavours()) if findings else None
            allowed = expecting is not None and evaluate(expecting, "x86_64", (), findings).passed
            effect = ("fails the completed run (judged, exit 1)" + ("; passes with expect-kernel" if allowed else "")
                      if not result.passed else
                      "no finding: a hang stays a hang" if not findings else "passes")
        effects.append(FindingOutcome(kind, line, effect))
    return effects

# --------------------------------------------------------------------------
# 4. Judging bounded, 5. runs that must not pass.


@dataclass(frozen=True)
class JudgingOutcome:
    name: str
    seconds: float
    verdict: str


def judging_bounds() -> list[JudgingOutcome]:
    """A `matches` that backtracks without end (Python stayed busy
    200 s after the guest), and a judging past its deadline: what the judge
    says and how long it takes."""
    text = BASE.split("[[step]]")[0] + f'[[step]]\n{PROBE}\n[step.expect.time64.time]\nabsent = {{ matches = "^(0|00)+x" }}\n'
    scenario = parse_scenario(text, "judging.toml", suite.catalogue(), suite.machine_flavours())
    zeros = Observation(scenario.name, "x86_64", "in-2040", "clock", "time64", "time", {"absent": "0" * 60})
    rows = []
    for name, seconds in (("matches = \"^(0|00)+x\" on 60 zeros", None), ("judging past its deadline", -1.0)):
        start = time.monotonic()
        result = evaluate(scenario, "x86_64", [zeros], seconds=JUDGE_SECONDS if seconds is None else seconds)
        (verdict,) = result.verdicts
        rows.append(JudgingOutcome(name, time.monotonic() - start,
                                   f"{'passed' if verdict.passed else 'failed'}: {verdict.observed}"))
    return rows


@dataclass(frozen=True)
class RunOutcome:
    name: str
    exit_code: int | None
    outcome: str  # run.json's
    judged: int  # expectations in verdicts.json
    observed: int  # lines of observations.jsonl
    line: str

    @property
    def false_pass(self) -> bool:
        """Exit 0 without having tested anything: nothing judged, or nothing observed."""
        return self.exit_code == 0 and (self.judged == 0 or self.observed == 0)


def _many_arguments() -> str:
    """A probe step given 100,000 arguments: within the guest's exec limit
    (about 1.3 of its 2 MiB), so the probe must run them all."""
    args = ", ".join(['"time"'] * 100_000)
    return (BASE.split("[[step]]")[0].replace('rtc = ', 'machines = ["x86_64"]\nrtc = ', 1)
            + f'[[step]]\nphase = "p"\nprobe = "clock"\nflavours = ["time64"]\nargs = [{args}]\n'
            + '[step.expect.time64.time]\nerrno = "none"\n')


RUNS = (("a probe given 100,000 arguments", _many_arguments),)


def _count(paths: list[Path], read: Callable[[Path], int]) -> int:
    return read(paths[0]) if paths else 0


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def try_runs(folder: Path, seconds: float = 600.0) -> list[RunOutcome]:
    """Each file through `sandbox run` (boots x86_64): its exit code, run.json,
    how many expectations it judged and observations it kept."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for index, (name, make) in enumerate(RUNS):
        path, results = folder / f"run-{index}.toml", folder / f"results-{index}"
        path.write_text(make())
        env = dict(os.environ, PYTHONPATH=str(paths.REPO), Y2038_RESULTS=str(results))
        try:
            done = subprocess.run([sys.executable, "-m", "sandbox", "run", str(path)], env=env,
                                  capture_output=True, timeout=seconds, check=False)
            code, err = done.returncode, done.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            code, err = None, f"no answer within {seconds:.0f} s"
        runs = list(results.glob("*/*/*/run.json"))
        info = json.loads(runs[0].read_text()) if runs else {}
        judged = _count(list(results.glob("*/*/*/verdicts.json")), lambda p: len(json.loads(p.read_text())))
        observed = _count(list(results.glob("*/*/*/observations.jsonl")),
                          lambda p: sum(1 for line in p.read_text().splitlines() if line.strip()))
        rows.append(RunOutcome(name, code, str(info.get("outcome", "")), judged, observed,
                               _last_line(str(info.get("detail") or err))[:110]))
    return rows


def report_runs(runs: list[RunOutcome]) -> str:
    if not runs:
        return ""
    false = sum(r.false_pass for r in runs)
    return (f"\n### Runs that must test what they pass: {len(runs)} tried, false passes: {false}\n\n"
            + _table(["file", "exit code", "run.json outcome", "expectations judged", "observations", "detail"],
                     [[r.name, str(r.exit_code), r.outcome or "(none)", str(r.judged), str(r.observed),
                       "`" + r.line.replace("|", "\\|").replace("`", "'") + "`"] for r in runs]) + "\n")


def report_judging(rows: list[JudgingOutcome]) -> str:
    return ("\n### Judging, bounded\n\n"
            + _table(["case", "judged in", "verdict"],
                     [[r.name.replace("|", "\\|"), f"{r.seconds:.2f} s",
                       "`" + r.verdict.replace("|", "\\|")[:110] + "`"] for r in rows]) + "\n")

# --------------------------------------------------------------------------
# The report.


def _table(header: list[str], rows: list[list[str]]) -> str:
    cells = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(row) + " |" for row in cells)


def report(files: list[FileOutcome], trials: list[SignalTrial], effects: list[FindingOutcome]) -> str:
    out = []
    counts: dict[str, int] = {}
    for f in files:
        counts[f.outcome] = counts.get(f.outcome, 0) + 1
    out.append(f"### Malformed files: {len(files)} tried\n")
    out.append(", ".join(f"{outcome}: {counts.get(outcome, 0)}" for outcome in OUTCOMES)
               + f" ({sum(1 for f in files if f.outcome in ('one-line error', 'accepted'))} as they should)\n")
    out.append(_table(["group", "file", "outcome", "what the user sees"],
                      [[f.group, f.name.replace("|", "\\|"), f.outcome,
                        "`" + f.line.replace("|", "\\|").replace("`", "'")[:110] + "`"] for f in files]))
    if trials:
        kept = sum(t.evidence_kept for t in trials)
        out.append(f"\n### Signals x targets: {len(trials)} trials, QEMU left after 2 s: "
                   f"{sum(t.qemu_left for t in trials)}, evidence kept: {kept}/{len(trials)} "
                   f"({100 * kept // len(trials)}%)\n")
        out.append(_table(["target", "signal", "QEMU left after 2 s", "QEMU gone after", "run.json outcome",
                           "report.txt", "exit code", "QEMU CapEff"],
                          [[t.target, t.signal, str(t.qemu_left),
                            f"{t.gone_after:.2f} s" if t.gone_after is not None else "never",
                            t.outcome or "(none)", "yes" if t.report_kept else "no",
                            str(t.exit_code), t.qemu_capeff or "?"] for t in trials]))
    out.append(f"\n### Kernel findings: {len(effects) - 1} kinds\n")
    out.append(_table(["kind", "console line", "effect"],
                      [[e.kind, "`" + e.line + "`", e.effect] for e in effects]))
    return "\n".join(out) + "\n"


def measure(boot: bool = True) -> str:
    """The measurements' tables (`sandbox reliability`; --no-boot: boot=False)."""
    with tempfile.TemporaryDirectory(prefix="y2038-reliability-") as tmp:
        folder = Path(tmp)
        say("malformed files ...")
        files = try_malformed(folder / "files")
        trials, runs = [], []
        if boot:
            pairs = [(target, signum) for target in TARGETS for signum in SIGNALS] + list(KILLS)
            for target, signum in pairs:
                say(f"signal {signal.Signals(signum).name} to {target} ...")
                trials.append(signal_trial(target, signum, folder / f"{target}-{signum}".replace(" ", "-")))
            say("runs that must test what they pass ...")
            runs = try_runs(folder / "runs")
        effects = finding_effects()
        judged = judging_bounds()
        sections, total = measure_all(SECTIONS, folder / "sections", boot)
        total = total + Tally(tracebacks=sum(f.outcome == "traceback" for f in files),
                              hangs=sum(f.outcome == "hang" for f in files),
                              false_passes=sum(f.outcome == "false pass" for f in files)
                              + sum(r.false_pass for r in runs))
    return (f"All sections: {total.line()}\n\n" + report(files, trials, effects) + report_runs(runs)
            + report_judging(judged) + sections)


COMPARED = "`just reliability --compare`: the malformed files given to an earlier commit and to this one"


@contextmanager
def worktree_of(commit: str, folder: Path) -> Iterator[Path]:
    """A detached worktree of `commit` (removed after): another commit's code to try."""
    tree = folder / "tree"
    added = subprocess.run(["git", "-C", str(paths.REPO), "worktree", "add", "--detach", "--quiet", str(tree),
                            commit], capture_output=True, text=True, check=False)
    if added.returncode != 0:
        why = added.stderr.strip().splitlines()[-1] if added.stderr.strip() else "git worktree add failed"
        raise InputError("--compare", commit, f"not a commit of this repository ({why})")
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(paths.REPO), "worktree", "remove", "--force", str(tree)],
                       capture_output=True, check=False)


def report_compared(commit: str, before: list[FileOutcome], after: list[FileOutcome]) -> str:
    """Both commits' counts, then every file whose outcome changed."""
    def counts(files: list[FileOutcome]) -> str:
        return ", ".join(f"{o}: {sum(f.outcome == o for f in files)}" for o in OUTCOMES)
    out = [f"{len(after)} files; at {commit}: {counts(before)}", f"now: {counts(after)}", ""]
    changed = [[b.group, b.name.replace("|", "\\|"), b.outcome, a.outcome]
               for b, a in zip(before, after, strict=True) if b.outcome != a.outcome]
    out.append(_table(["group", "file", f"at {commit}", "now"], changed))
    return "\n".join(out) + "\n"


def compare(commit: str) -> str:
    """The malformed files given to `commit`'s code and to this tree's (no boot:
    the earlier code gets an empty cache, so a run it starts cannot build)."""
    with tempfile.TemporaryDirectory(prefix="y2038-reliability-") as tmp:
        folder = Path(tmp)
        with worktree_of(commit, folder) as tree:
            say(f"malformed files at {commit} ...")
            before = try_malformed(folder / "before", tree)
        say("malformed files now ...")
        after = try_malformed(folder / "after")
    return report_compared(commit, before, after)
