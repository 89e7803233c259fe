"""pytest plugin: every scenarios/**/*.toml file is a test per machine.

Collection validates the file (a bad one is a one-line collection error
naming the file and the key); running boots the machine through
sandbox.app.jobs. Every session keeps its evidence (console and kernel logs,
observations, JUnit XML) in one results folder. A session with scenarios
prints a line per scenario done, of the total, with the time left (under
pytest-xdist too: the controller counts the reports). Workers on other hosts
(`--tx ssh=...`, docs/across-hosts.md) keep their evidence there; the
summary names each one's results folder.

`--tree 6.12` runs the session on that kernel source tree (sandbox/base/trees.py;
default 6.1): every scenario that does not pin a tree, the boot tests and
KUnit boot its kernels; a scenario pinned to another tree (`tree = ...`),
or a machine the tree is not built for (i386 on 6.12), is skipped with the
reason, before anything boots.
"""
from __future__ import annotations

import math
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from sandbox.base import evidence as files
from sandbox.kunit import cases as kunit
from sandbox.kunit import ktap
from sandbox.base import paths
from sandbox.base.meter import line as progress_line
from sandbox.report import text as report
from sandbox.scenario import suite
from sandbox.app import signals
from sandbox.app.signals import install_signal_handlers
from sandbox.app.jobs import run_and_judge
from sandbox.report import html as html_report
from sandbox.judge.judged import JudgedRun
from sandbox.base.errors import SandboxError
from sandbox.base.machines import machine
from sandbox.scenario.model import Scenario
from sandbox.system.scenario import SystemScenario, load_system_scenario
from sandbox.system.scenario_run import run_system_scenario
from sandbox.guest.target import Target, prepare_target
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, TREES, not_built_for, tree as tree_named
from sandbox.base.variants import DEFAULT as DEFAULT_VARIANT

SYSTEM_MARK = "system"
RESULTS_KEY = pytest.StashKey[Path]()
KTAP_KEY = pytest.StashKey[dict[str, "ktap.Document | None"]]()
TARGETS_KEY = pytest.StashKey[dict[tuple[str, str], Target]]()
REPORT_KEY = pytest.StashKey[str]()
REMOTE_KEY = pytest.StashKey[list[str]]()
FAIL_ON_SKIP = "Y2038_FAIL_ON_SKIP"
"""Set to 1 (.ci/run does): a skipped test fails the session. CI installs
every tool the suite needs, so a skip there is a missing install step (the
-m32 headers once hid 19 tests as skips). The top session takes it out of
the environment, so its workers and the sessions tests start do not see it."""


def is_scenario(nodeid: str) -> bool:
    """A scenario file's test (`scenarios/clock/rollover.toml::x86_64`)."""
    return ".toml::" in nodeid


@dataclass
class ScenarioCount:
    """Scenarios done of the collected total, as the session (or the xdist
    controller) sees their reports."""
    start: float
    total: int = 0
    done: int = 0
    seen: set[str] = field(default_factory=set)

    def collected(self, nodeids: list[str]) -> None:
        """Once (xdist: every worker collects the same ids)."""
        if not self.total:
            self.total = sum(map(is_scenario, nodeids))

    def finished(self, nodeid: str, when: str, outcome: str, now: float) -> str | None:
        """The line for a scenario whose run just ended (its call, or a setup
        that failed or skipped), else None."""
        if not is_scenario(nodeid) or nodeid in self.seen:
            return None
        if when != "call" and not (when == "setup" and outcome != "passed"):
            return None
        self.seen.add(nodeid)
        self.done += 1
        return progress_line(f"scenario {outcome} {nodeid}", self.done, self.total or None,
                             now - self.start, unit="scenarios")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("y2038", "y2038 rollover sandbox")
    group.addoption("--machine", action="append", default=[],
                    help="run scenarios only on this machine (repeatable)")
    group.addoption("--tree", default=DEFAULT_TREE, choices=list(TREES),
                    help=f"the kernel source tree of the session's kernels (default {DEFAULT_TREE})")
    group.addoption("--system", action="store_true",
                    help="also run the whole-system scenarios (scenarios/system/, marker `system`: minutes "
                         "each); without it they are collected, validated and deselected")


def session_tree(config: pytest.Config) -> str:
    """The kernel source tree the session boots (--tree)."""
    return str(config.getoption("tree"))


WORKERS_PER_CORE = 1.5


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own, which counts the cores
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """What `-n auto` (`just test`) means here: one and a half workers per
    core, rounded up. A guest computing keeps a core busy, but about a
    third of the suite's test time is real-time waiting with the guest idle
    (NTP between two guests, the live clock, the signal trials), which
    leaves its core to another worker. The whole suite on 2 cores
    (2026-12-05, one run each, one after the other): 2 workers 210 s, 3 workers
    182 s, 4 workers 174 s; 3 keeps some room for the tests that time a
    guest."""
    return math.ceil((os.cpu_count() or 1) * WORKERS_PER_CORE)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    inherited = os.environ.get("Y2038_SESSION_RESULTS")
    results = Path(inherited) if inherited else paths.new_results_dir("pytest")
    os.environ["Y2038_SESSION_RESULTS"] = str(results)
    config.stash[RESULTS_KEY] = results
    # SIGTERM and SIGHUP stop the session as Ctrl-C does: QEMU stopped, run recorded.
    # An xdist worker on an SSH host may run in one of execnet's threads (when
    # the gateway's chdir snippet still holds the main one): no handlers there.
    if threading.current_thread() is threading.main_thread():
        install_signal_handlers()
    config.addinivalue_line("markers", f"{SYSTEM_MARK}: a whole system across the rollover (scenarios/system/); "
                            "deselected unless --system is given")
    config.stash[TARGETS_KEY] = dict[tuple[str, str], Target]()
    config.stash[KTAP_KEY] = dict[str, "ktap.Document | None"]()
    if not config.option.xmlpath:
        config.option.xmlpath = str(results / files.JUNIT)
    config.stash[REMOTE_KEY] = list[str]()
    if hasattr(config, "workeroutput"):  # an xdist worker: where its evidence is, for the controller
        config.workeroutput["y2038_results"] = str(results)
        config.workeroutput["y2038_host"] = socket.gethostname()
    else:  # where the reports arrive: the session itself, or the xdist controller
        config.pluginmanager.register(ScenarioProgress(config), "y2038-scenario-progress")
        if os.environ.pop(FAIL_ON_SKIP, "") == "1":
            config.pluginmanager.register(SkipsFail(), "y2038-skips-fail")


class ScenarioProgress:
    """Prints ScenarioCount's line as each scenario's report arrives."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.count = ScenarioCount(time.monotonic())

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.count.collected([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.count.collected(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = self.count.finished(report.nodeid, report.when, report.outcome, time.monotonic())
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if text is None or reporter is None:
            return
        if reporter._tw.width_of_current_line:  # after -q's dots, which ensure_newline() leaves
            reporter._tw.line()
        reporter.write_line(text)


class SkipsFail:
    """FAIL_ON_SKIP: counts the skipped tests' reports (a worker's arrive at
    the controller) and fails a session that has any."""

    def __init__(self) -> None:
        self.skipped: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skipped.append(report.nodeid)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.skipped:
            self.skipped.append(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.skipped:
            terminalreporter.write_line(f"{FAIL_ON_SKIP}=1: {len(self.skipped)} skipped test(s) fail the session "
                                        f"(a tool missing here?), first {self.skipped[0]}")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """A worker on another host (`--tx ssh=...`) kept its evidence there: say where."""
    output = getattr(node, "workeroutput", None) or {}
    if getattr(node.gateway.spec, "ssh", None) and "y2038_results" in output:
        node.config.stash[REMOTE_KEY].append(
            f"{node.gateway.id} on ssh={node.gateway.spec.ssh} (host {output.get('y2038_host')}): "
            f"its results are there, in {output['y2038_results']}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """results/<run>/report.html, once (not in xdist workers), when anything booted.
    A session a signal stopped exits 128 + n, as `python3 -m sandbox` does,
    not pytest's 2 (sandbox/app/signals.py)."""
    if signals.received and session.exitstatus == pytest.ExitCode.INTERRUPTED:
        session.exitstatus = signals.exit_code_of(signals.received[0])
    config = session.config
    results = config.stash.get(RESULTS_KEY, None)
    if results is None or hasattr(config, "workerinput") or not any(results.rglob(files.RUN)):
        return
    try:
        stats = html_report.write_report(results)
        config.stash[REPORT_KEY] = html_report.describe(stats)
    except Exception as err:  # noqa: BLE001 - the tests are judged; the page is a view of them
        config.stash[REPORT_KEY] = f"report.html not written: {type(err).__name__}: {err}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    for text in config.stash.get(REMOTE_KEY, []):
        terminalreporter.write_line(text)
    if REPORT_KEY in config.stash:
        terminalreporter.write_line(config.stash[REPORT_KEY])


def pytest_report_header(config: pytest.Config) -> str:
    return f"y2038 results: {config.stash[RESULTS_KEY]}"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".toml" and paths.SYSTEM_SCENARIOS in file_path.parents:
        return SystemScenarioFile.from_parent(parent, path=file_path)
    if file_path.suffix == ".toml" and paths.SCENARIOS in file_path.parents:
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The whole-system scenarios (marker `system`, minutes each on two cores)
    run only with --system: without it they are deselected, after their
    collection has validated them."""
    if config.getoption("system"):
        return
    chosen = [item for item in items if item.get_closest_marker(SYSTEM_MARK) is None]
    if len(chosen) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
        items[:] = chosen


def machine_target(config: pytest.Config, name: str, variant: str = DEFAULT_VARIANT) -> Target:
    """Kernel (of this variant and the session's tree), initramfs and
    accelerator for a machine, once per session; a machine the tree is not
    built for skips the test that asks."""
    tree = session_tree(config)
    reason = not_built_for(tree, name)
    if reason:
        pytest.skip(reason)
    cache = config.stash[TARGETS_KEY]
    if (name, variant) not in cache:
        cache[name, variant] = prepare_target(machine(name), variant, tree)
    return cache[name, variant]


@pytest.fixture
def y2038_target(request: pytest.FixtureRequest) -> Any:
    """A function: machine name (and kernel variant) -> Target (built or reused from the cache)."""
    return lambda name="x86_64", variant=DEFAULT_VARIANT: machine_target(request.config, name, variant)


def ktap_document(config: pytest.Config, name: str) -> ktap.Document | None:
    """The KTAP the series kernel's KUnit printed when booting a machine, once per session."""
    cache = config.stash[KTAP_KEY]
    if name not in cache:
        evidence = config.stash[RESULTS_KEY] / "kunit" / f"{name}{tree_named(session_tree(config)).build_suffix}"
        cache[name] = kunit.boot_and_parse(machine_target(config, name), evidence)
    return cache[name]


@pytest.fixture
def y2038_ktap(request: pytest.FixtureRequest) -> Any:
    """A function: machine name -> its KUnit run at boot (sandbox.kunit.ktap.Document or None)."""
    wanted = request.config.getoption("machine")

    def document(name: str) -> ktap.Document | None:
        if wanted and name not in wanted:
            pytest.skip(f"--machine leaves out {name}")
        return ktap_document(request.config, name)
    return document


@pytest.fixture
def y2038_evidence(request: pytest.FixtureRequest) -> Path:
    """This test's evidence folder inside the session's results folder."""
    folder = request.config.stash[RESULTS_KEY] / "tests" / request.node.name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        wanted = self.config.getoption("machine")
        for scenario in suite.load_all([self.path]):
            for machine_name in scenario.machines:
                if not wanted or machine_name in wanted:
                    name = f"{machine_name}[{scenario.variant}]" if scenario.variant else machine_name
                    item = ScenarioItem.from_parent(self, name=name, scenario=scenario, machine=machine_name)
                    reason = scenario.skip_on(session_tree(self.config), machine_name)
                    if reason:
                        item.add_marker(pytest.mark.skip(reason=reason))
                    yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SandboxError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class ScenarioFailed(Exception):
    """Expectations failed, or the guest panicked or hung: the report says which."""


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, machine: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.machine = machine

    def runtest(self) -> None:
        target = machine_target(self.config, self.machine, self.scenario.kernel)
        evidence = self.config.stash[RESULTS_KEY] / self.scenario.slug / self.machine
        judged: JudgedRun = run_and_judge(target, self.scenario, evidence)  # charts drawn in this worker
        self.user_properties += [("accel", target.accel.name),
                                 ("outcome", judged.record.outcome),
                                 ("evidence", str(evidence))]
        if not judged.passed:
            raise ScenarioFailed(report.failure_report(judged.record, judged.result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (ScenarioFailed, SandboxError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.scenario.name} on {self.machine}"


class SystemScenarioFile(pytest.File):
    """A whole-system scenario (scenarios/system/*.toml): validated when
    collected, one test marked `system`."""

    def collect(self) -> Iterator[pytest.Item]:
        scenario = load_system_scenario(self.path)
        item = SystemScenarioItem.from_parent(self, name=scenario.system, scenario=scenario)
        item.add_marker(getattr(pytest.mark, SYSTEM_MARK))
        yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SandboxError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class SystemScenarioItem(pytest.Item):
    def __init__(self, *, scenario: SystemScenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def runtest(self) -> None:
        evidence = self.config.stash[RESULTS_KEY] / self.scenario.slug / self.scenario.system
        run = run_system_scenario(self.scenario, evidence)
        self.user_properties += [("outcome", run.result.outcome), ("evidence", str(evidence))]
        if not run.passed:
            raise ScenarioFailed("\n".join(run.lines() + [f"evidence: {evidence}"]))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (ScenarioFailed, SandboxError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.scenario.name} ({self.scenario.system})"
