"""NTP between two guests without QEMU: the [time-server] and ntp-sync keys
checked before boot, the guest commands they plan, the QEMU link between the
two, and the run loop driving a replayed server and client (captures of
`just run --machine i386 scenarios/ntp/rollover-2038.toml`, pytest/data)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from replay_guest import ReplayGuest, captured, frame, prepared, prepared_server

from sandbox.base.errors import InputError
from sandbox.base.machines import MACHINES
from sandbox.base.paths import REPO
from sandbox.guest.qemu import BootRequest, Link, link_args, qemu_argv
from sandbox.judge.evaluate import evaluate
from sandbox.run import chrony
from sandbox.run.plan import network_commands, plan, server_commands
from sandbox.run.record import COMPLETED, STEP_FAILED
from sandbox.run.runner import SERVER_FOLDER, run_scenario
from sandbox.scenario import suite
from sandbox.scenario.model import NtpSyncStep, TimeServer
from sandbox.scenario.parser import parse_scenario
from sandbox.scenario.userlands import load_userlands

ROLLOVER = REPO / "scenarios" / "ntp" / "rollover-2038.toml"
FILE = "scenarios/ntp/x.toml"
HEAD = 'title = "t"\nrtc = "2026-06-01T00:00:00Z"\nmachines = ["i386"]\n'
SERVER = '[time-server]\ntime = "2038-01-19T03:14:00Z"\n'
SYNC = '[[step]]\nphase = "synced"\nntp-sync = "debian12-i386"\n'


def parse(text: str):
    return parse_scenario(text, FILE, suite.load_catalogue(), suite.machine_flavours(), load_userlands())


def test_a_time_server_scenario_runs_without_warp_and_plans_the_client_and_the_server() -> None:
    scenario = parse(HEAD + SERVER + SYNC)
    assert scenario.time_server == TimeServer(2147483640, "debian12-amd64", "x86_64")
    assert scenario.warp is False
    assert scenario.userlands == ("debian12-i386",)  # appended to the client's initramfs
    (step,) = scenario.steps
    assert isinstance(step, NtpSyncStep) and step.server is None and step.must_step and step.timeout == 30
    (network,) = network_commands(scenario.time_server)
    assert network.must_succeed and "10.38.0.2/24 dev eth0" in network.shell
    (sync,) = plan(scenario.steps, scenario.machines["i386"], "time64")
    assert sync.output == "chrony" and sync.flavour == "debian12-i386" and sync.must_succeed
    assert "server 10.38.0.1 iburst" in sync.shell and "makestep 1 -1" in sync.shell
    assert f"while [ $n -lt {round(30 / chrony.POLL_SECONDS)} ]" in sync.shell
    served = [c.shell for c in server_commands(scenario.time_server)]
    assert "mount -t proc proc /userlands/debian12-amd64/proc" in served[0]
    assert "10.38.0.1/24 dev eth0" in served[1]
    assert "local stratum 1" in served[2] and "chronyd -4 -u root" in served[2] and served[2].endswith(" -x")


def test_must_step_false_makes_a_timeout_an_observation() -> None:
    scenario = parse(HEAD + SERVER + SYNC + 'must-step = false\ntimeout = 5\nserver = "10.38.0.9"\n')
    (sync,) = plan(scenario.steps, scenario.machines["i386"], "time64")
    assert not sync.must_succeed and "server 10.38.0.9 iburst" in sync.shell
    assert "while [ $n -lt 25 ]" in sync.shell and "exit 0" in sync.shell


BAD = [
    ("server time past the RTC", HEAD + SERVER.replace("2038-01-19T03:14:00Z", "2100-01-01T00:00:00Z") + SYNC,
     "time-server.time: 2100-01-01T00:00:00Z is outside 1970-01-01T00:00:00Z..2099-12-31T23:59:59Z: QEMU's -rtc "
     "base sets the emulated CMOS/RTC clock, which only holds 1970..2099; reach later times with a set-clock step"),
    ("server time not a time", HEAD + SERVER.replace('"2038-01-19T03:14:00Z"', "5") + SYNC,
     'time-server.time: expected a time such as "2038-01-19T03:14:08Z", got an integer'),
    ("unknown server key", HEAD + SERVER + "port = 123\n" + SYNC,
     "time-server.port: unknown key 'port' for [time-server] (known: time, userland)"),
    ("unknown server userland", HEAD + SERVER + 'userland = "debian99"\n' + SYNC,
     "time-server.userland: unknown userland 'debian99' (known: debian12-armhf, debian13-armhf, debian12-i386, "
     "debian13-i386, debian12-amd64)"),
    ("no server for the step", HEAD + SYNC,
     "step[0].ntp-sync: no [time-server]: the guest has a network only with one"),
    ("a kernel without a network", HEAD + 'kernel = "pristine"\n' + SERVER + SYNC,
     "kernel: kernel 'pristine' is built without a network; a [time-server] needs kernel = 'series' or 'strict' or 'system' or 'checked'"),
    ("warp with a server", HEAD + "warp = true\n" + SERVER + SYNC,
     "warp: two guests under time warp each jump their clock ahead while idle, each at its own moments, so NTP "
     "would measure the jumps; a scenario with a [time-server] runs without warp"),
    ("client userland of another arch", HEAD + SERVER + SYNC.replace("debian12-i386", "debian12-armhf"),
     "step[0].ntp-sync: userland 'debian12-armhf' is armhf; machine 'i386' cannot run it (list only machines "
     "that can in `machines`)"),
    ("bad server address", HEAD + SERVER + SYNC + 'server = "10.38.0.300"\n',
     "step[0].server: '10.38.0.300' is not an IPv4 address such as \"10.38.0.1\""),
    ("timeout too long", HEAD + SERVER + SYNC + "timeout = 3600\n",
     "step[0].timeout: expected a number of seconds in (0, 600], got 3600"),
    ("must-step not a boolean", HEAD + SERVER + SYNC + 'must-step = "no"\n',
     "step[0].must-step: expected true or false, got a string"),
    ("unknown chronyd field", HEAD + SERVER + SYNC + '[step.expect.debian12-i386]\noffset = 0\n',
     "step[0].expect.debian12-i386.offset: unknown field 'offset' (call chronyd prints: result, step, clock, "
     "reference, stratum, leap, log, tracking, sources, errno)"),
]


@pytest.mark.parametrize(("text", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_ntp_input_gives_one_line_naming_file_and_key(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(text)
    assert str(caught.value) == f"{FILE}: {message}"


def test_the_link_is_one_datagram_socket_pair_and_no_link_is_no_nic(tmp_path: Path) -> None:
    machine = MACHINES["armhf"]
    assert link_args(machine.qemu, None) == ["-nic", "none"]
    link = Link(tmp_path / "a,b", tmp_path / "c", "52:54:00:38:00:02")
    netdev, device = link_args(machine.qemu, link)[1], link_args(machine.qemu, link)[3]
    assert netdev == (f"dgram,id=link,local.type=unix,local.path={tmp_path}/a,,b,"
                      f"remote.type=unix,remote.path={tmp_path}/c")
    assert device == "virtio-net-device,netdev=link,mac=52:54:00:38:00:02"
    request = BootRequest(machine, Path("/k"), Path("/i"), "2036-02-07T06:28:00", "tcg", tmp_path, link=link)
    argv = qemu_argv(request)
    assert "-nic" not in argv and argv.count("-netdev") == 1


def test_sync_fields_read_the_step_the_tracking_and_the_clock() -> None:
    stdout = "\n".join([
        "=== result", "stepped",
        "=== log", "2026-06-01T00:00:14Z System clock wrong by 367211640.680833 seconds",
        "2038-01-19T03:14:17Z System clock was stepped by 367211640.680833 seconds",
        "=== tracking", "Reference ID    : 0A260001 (10.38.0.1)", "Stratum         : 2",
        "Leap status     : Normal",
        "=== sources", "^* 10.38.0.1                     1   0    37     0  -6528us[  -45ms] +/-   27ms",
        "=== clock", '{"probe":"clockstep","flavour":"time64","call":"wait","realtime_after":2147483658}', ""])
    fields = chrony.sync_fields(stdout)
    assert fields["result"] == "stepped" and fields["step"] == 367211640.680833
    assert (fields["reference"], fields["stratum"], fields["leap"]) == ("10.38.0.1", 2, "Normal")
    assert fields["clock"] == 2147483658
    assert fields["sources"].startswith("^* 10.38.0.1")
    dead = chrony.sync_fields("=== result\nexited\n=== tracking\n506 Cannot talk to daemon\n=== clock\n")
    assert dead == {"result": "exited", "log": "", "tracking": "506 Cannot talk to daemon", "sources": ""}


BOOT = BootRequest(MACHINES["i386"], Path("/k/vmlinux"), Path("/i/with-userland.cpio"), "", "tcg", Path())
SERVER_BOOT = BootRequest(MACHINES["x86_64"], Path("/k/server-vmlinux"), Path("/i/server.cpio"), "", "tcg", Path(),
                          memory_mib=622)


def two_guests(server_transcript: list[str], server_ending: str = "died"):
    """A start function that replays the time server's capture for the
    request whose evidence is time-server/, the client's for the other."""
    guests: dict[str, ReplayGuest] = {}

    def start(request: BootRequest) -> ReplayGuest:
        role = "server" if request.evidence.name == SERVER_FOLDER else "client"
        transcript, console = (server_transcript, captured("ntp-server")[1]) if role == "server" \
            else captured("ntp-client-i386")
        guests[role] = ReplayGuest(request, transcript, console, server_ending if role == "server" else "died")
        return guests[role]
    return start, guests


def test_the_server_boots_serves_and_both_guests_stop_with_the_evidence_kept(tmp_path: Path) -> None:
    (scenario,) = [s for s in suite.load_all([ROLLOVER]) if s.variant == "debian12-i386"]
    start, guests = two_guests(captured("ntp-server")[0])
    record = run_scenario(scenario, prepared(scenario, tmp_path / "run", BOOT), start, server_boot=prepared_server(scenario, tmp_path / "run", SERVER_BOOT))
    assert record.outcome == COMPLETED
    server, client = guests["server"], guests["client"]
    assert server.stopped and client.stopped
    assert server.request.rtc == "2038-01-19T03:14:04Z" and server.request.kernel == SERVER_BOOT.kernel
    assert server.request.link and client.request.link
    assert (server.request.link.local, server.request.link.remote) == \
        (client.request.link.remote, client.request.link.local)
    assert not server.request.warp and not client.request.warp
    assert server.commands == [*(c.shell for c in server_commands(scenario.time_server)),
                               chrony.log_shell("debian12-amd64")]  # its log, for the evidence
    assert "10.38.0.2/24" in client.commands[1] and "chronyd" in client.commands[2]
    (synced,) = [o for o in record.observations if o.phase == "synced"]
    assert synced.values["result"] == "not stepped" and "seconds is invalid" in str(synced.values["log"])
    result = evaluate(scenario, "i386", record.observations)
    assert result.passed, [v for v in result.verdicts if not v.passed]
    summary = json.loads((record.evidence / "run.json").read_text())["time_server"]
    assert summary["machine"] == "x86_64" and summary["userland"] == "debian12-amd64"
    log = (record.evidence / SERVER_FOLDER / "chronyd.log").read_text()
    assert "Disabled control of system clock" in log and summary["chronyd_log"] == log
    assert (record.evidence / SERVER_FOLDER / "console.log").is_file()


def test_a_server_whose_chronyd_fails_is_a_failed_step_and_the_client_runs_nothing(tmp_path: Path) -> None:
    (scenario,) = [s for s in suite.load_all([ROLLOVER]) if s.variant == "debian12-i386"]
    ready = captured("ntp-server")[0][:1]
    transcript = ready + frame(1, "") + frame(2, "") + frame(3, "", "chronyd: Fatal error : no socket", 1)
    start, guests = two_guests(transcript)
    record = run_scenario(scenario, prepared(scenario, tmp_path / "run", BOOT), start, server_boot=prepared_server(scenario, tmp_path / "run", SERVER_BOOT))
    assert record.outcome == STEP_FAILED
    assert record.detail.startswith("time server: chronyd (") and "Fatal error : no socket" in record.detail
    assert guests["client"].commands == [] and guests["client"].stopped and guests["server"].stopped


def test_a_server_that_hangs_ends_the_run_as_a_hang_of_the_time_server(tmp_path: Path) -> None:
    (scenario,) = [s for s in suite.load_all([ROLLOVER]) if s.variant == "debian12-i386"]
    start, guests = two_guests([], server_ending="hung")
    record = run_scenario(scenario, prepared(scenario, tmp_path / "run", BOOT), start, server_boot=prepared_server(scenario, tmp_path / "run", SERVER_BOOT))
    assert record.outcome == "hang" and record.detail.startswith("time server: no answer")
    assert guests["client"].stopped and guests["server"].stopped


def test_a_time_server_scenario_needs_the_servers_boot(tmp_path: Path) -> None:
    (scenario,) = [s for s in suite.load_all([ROLLOVER]) if s.variant == "debian12-i386"]
    start, _ = two_guests([])
    with pytest.raises(ValueError, match="needs its boot"):
        run_scenario(scenario, prepared(scenario, tmp_path / "run", BOOT), start)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["outcome"] == "error"


def test_an_interrupted_run_stops_both_guests_and_says_so(tmp_path: Path) -> None:
    (scenario,) = [s for s in suite.load_all([ROLLOVER]) if s.variant == "debian12-i386"]
    start, guests = two_guests(captured("ntp-server")[0])

    def interrupting(request: BootRequest) -> ReplayGuest:
        guest = start(request)
        if request.evidence.name != SERVER_FOLDER:
            def run(command: str, deadline: object) -> None:
                raise KeyboardInterrupt
            guest.run = run
        return guest
    with pytest.raises(KeyboardInterrupt):
        run_scenario(scenario, prepared(scenario, tmp_path / "run", BOOT), interrupting, server_boot=prepared_server(scenario, tmp_path / "run", SERVER_BOOT))
    assert guests["server"].stopped and guests["client"].stopped
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["outcome"] == "interrupted" and run["time_server"]["boot_seconds"] == 0.25
