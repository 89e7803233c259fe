"""results/<run>/report.html (sandbox/report/html.py), built from a results
folder of captured runs (pytest/unit/captured_results.py): no boot. The last
test opens it in headless Chromium (Debian's `chromium`) and checks the DOM
after load and the screenshot."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from captured_results import build_results

from sandbox.app.cli import main
from sandbox.base.errors import SandboxError
from sandbox.report.evidence import default_reader, newest_results, read_results
from sandbox.report.html import REPORT_FILE, write_report

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars")
"""Headless as root with the network closed: nothing tries to connect out."""
FAIL_RED = (0xB0, 0x00, 0x20)  # the outline of a failed cell


class Page(HTMLParser):
    """The tags of a page with their attributes, and its text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.chunks: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        if self.lasttag not in ("style", "title"):
            self.chunks.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.chunks).split())

    def all(self, tag: str) -> list[dict[str, str]]:
        return [attrs for name, attrs in self.tags if name == tag]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder, _ = build_results(tmp_path_factory.mktemp("report"), failing=True, panic=True)
    write_report(folder)
    return folder


def page_of(results: Path) -> str:
    return (results / REPORT_FILE).read_text()


def test_the_page_is_one_self_contained_file(results: Path) -> None:
    text = page_of(results)
    page = Page(text)
    assert not page.all("script") and not page.all("link") and not page.all("iframe")
    images = page.all("img")
    assert images and all(img["src"].startswith("data:image/png;base64,") for img in images)
    for attrs in page.all("a"):
        assert not re.match(r"[a-z]+://", attrs["href"]), attrs["href"]  # only anchors and evidence files
    assert "url(" not in text and "@import" not in text


def test_failures_come_first_with_expected_and_observed(results: Path) -> None:
    text = Page(page_of(results)).text
    assert text.index("Failures (2)") < text.index("Runs")
    assert "time.errno errno EINVAL errno EOVERFLOW /probes/time32-libc/clock" in text
    assert "PANIC guide/clock-2040 on x86_64 panic" in text and "Kernel panic - not syncing" in text
    assert "6 passed" in text and "1 failed" in text and "1 did not complete" in text
    first_run = re.search(r'<section class="run" id="([^"]+)"', page_of(results))
    assert first_run and first_run.group(1) == "run-clock-rollover-x86_64"


def test_each_cell_is_coloured_by_what_happened_and_explained_on_demand(results: Path) -> None:
    html = page_of(results)
    cells = re.findall(r'<td class="([^"]+)" title="([^"]*)"><details class="cell"><summary>([^<]*)</summary>'
                       r'<div class="more">(.*?)</div></details></td>', html, re.S)
    by_title = {title.split(";")[0]: (classes, summary, more) for classes, title, summary, more in cells}
    classes, summary, more = by_title["time32-libc time: error"]
    assert classes == "k-error fail" and summary == "EOVERFLOW"
    assert "expected errno EINVAL; observed <b>errno EOVERFLOW</b>" in more
    assert "in_time_t_range() fails" in more  # the scenario's comment: glibc's __time()
    classes, summary, more = by_title["time32-syscall time: wrapped"]
    assert classes == "k-wrapped ok" and summary == "1901-12-13T20:46:14Z"
    assert "sys_time32() casts ktime_get_real_seconds()" in more
    assert any(c.startswith("k-early") and s == "ETIMEDOUT 0s" for c, _, s, _ in cells)  # sem_timedwait
    assert any(c.startswith("k-clamped") for c, _, _, _ in cells)  # ext4-128
    assert "EXT4_NON_EXTRA_TIMESTAMP_MAX" in html  # the filesystem row's comment, behind its cells


def test_the_clock_and_file_times_are_drawn(results: Path) -> None:
    alts = [img["alt"] for img in Page(page_of(results)).all("img")]
    clock = [a for a in alts if a.startswith("Clock readings against true time")]
    assert len(clock) == 2  # the rollover, and the guide's clock read before its guest panicked
    assert any("time32-syscall read 1901-12-13T20:46:14Z (wrapped)" in a and "time32-libc failed with EOVERFLOW"
               in a for a in clock)
    (files,) = [a for a in alts if a.startswith("File times sent against stored")]
    assert "clamped at 2038-01-19T03:14:07Z" in files and "time32-syscall" in files


def test_the_runs_facts_and_links_to_the_evidence(results: Path) -> None:
    page = Page(page_of(results))
    text = page.text
    assert "6.1.192+ (series), Debian linux-source 6.1.192-3" in text
    assert "key ff10261ea1dc9517, branch series-da23c9d7d5f0, 2 patch(es)" in text
    assert "accelerator tcg" in text and "clock at boot 2038-01-19T03:13:50Z" in text
    links = {a["href"] for a in page.all("a") if not a["href"].startswith("#")}
    assert "clock-rollover/x86_64/console.log" in links and "clock-rollover/x86_64/observations.jsonl" in links
    assert all((results / href).is_file() for href in links)
    assert "sandbox demo --machine x86_64" in text  # session.json: the command


def test_just_report_rebuilds_the_page_from_the_evidence_alone(results: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    before = page_of(results)
    (results / REPORT_FILE).unlink()
    monkeypatch.setenv("Y2038_RESULTS", str(results.parent))
    assert main(["report"]) == 0  # the newest folder under Y2038_RESULTS
    out = capsys.readouterr().out
    assert f"report: {results / REPORT_FILE} (8 run(s), 3 chart(s)," in out and "built in" in out
    stamp = re.compile(r"built \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    assert stamp.sub("", page_of(results)) == stamp.sub("", before)
    assert newest_results(results.parent) == results
    with pytest.raises(SandboxError, match="no results folder with a run"):
        newest_results(results / "clock-rollover" / "x86_64")


def test_an_older_folder_without_facts_still_reads_and_never_takes_the_repositorys_scenario(
        results: Path, tmp_path: Path) -> None:
    copy = tmp_path / results.name
    shutil.copytree(results, copy)
    for name in ("facts.json", "scenario.toml", "session.json"):
        for path in copy.rglob(name):
            path.unlink()
    evidence = read_results(copy, default_reader())
    assert len(evidence.runs) == 8
    rollover = next(r for r in evidence.runs if r.name == "clock/rollover")
    assert rollover.facts == {} and not rollover.passed  # verdicts at run time
    assert rollover.scenario is None and "kept no copy of its scenario file" in rollover.problem  # not looked up by name
    stats = write_report(copy)
    assert stats.runs == 8 and "Debian linux-source ?" in page_of(copy)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    binary = _chromium()
    assert binary
    with tempfile.TemporaryDirectory(prefix="y2038-chromium-") as profile:
        return subprocess.run([binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed (Debian's `chromium`, listed in "
                    ".ci/debian-packages.txt; `just deps`)")
def test_the_page_in_a_real_browser(results: Path, tmp_path: Path) -> None:
    url = (results / REPORT_FILE).as_uri()
    dom = chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = Page(dom.stdout)
    text = page.text
    assert text.startswith("y2038 rollover report") and "Failures (2)" in text
    assert "expected errno EINVAL; observed errno EOVERFLOW" in text  # inside the failing cell
    assert len([img for img in page.all("img") if img["src"].startswith("data:image/png")]) == 3
    assert len([td for td in page.all("td") if "fail" in td.get("class", "").split()]) == 1
    shot = tmp_path / "report.png"
    run = chromium("--window-size=1200,1600", f"--screenshot={shot}", url)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    from PIL import Image  # python3-pil, which python3-matplotlib brings
    with Image.open(shot) as image:
        assert image.size == (1200, 1600)
        colours = {c for _, c in image.convert("RGB").getcolors(maxcolors=1 << 20) or ()}
    assert FAIL_RED in colours  # the failed cell's outline and badges were drawn
