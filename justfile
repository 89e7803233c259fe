# y2038 rollover sandbox. `just --list` shows the recipes.
# Python runs as /usr/bin/python3: Debian's python3-* packages live there.

# Every value that reaches the shell is quoted (quote(), or "$@" in the
# [positional-arguments] recipes): a file named 'x$(touch pwned).toml' stays a
# name, a name with a space stays one path. The recipes `exec` Python, so a
# signal to `just` (SIGTERM, which just forwards) or to the recipe's process
# reaches Python itself, which stops QEMU and records the run as interrupted.

python := "/usr/bin/python3"
sandbox := "env PYTHONPATH=" + quote(justfile_directory()) + " " + python + " -m sandbox"
pytest := "env PYTHONPATH=" + quote(justfile_directory() + ":" + justfile_directory() + "/pytest") + " " + python + " -m pytest -c pytest/pytest.ini --rootdir ."
# demo and build take a machine (sandbox/base/machines.py: x86_64, i386, armhf), as
# `just demo armhf` or `just demo machine=armhf`.

# Build what is missing, boot at 2038-01-19T03:13:50 and show the rollover;
# `just demo --live [machine]` watches the clock run across it, once a second.
[positional-arguments]
demo *args:
    exec {{sandbox}} demo "$@"

# Install the Debian packages listed in .ci/debian-packages.txt (root).
deps:
    exec {{sandbox}} deps

# Build (or reuse from the cache) the kernel and the initramfs of one machine.
build machine="x86_64":
    exec {{sandbox}} kernel --machine {{quote(trim_start_match(machine, "machine="))}}
    exec {{sandbox}} initramfs --machine {{quote(trim_start_match(machine, "machine="))}}

# Build (or reuse) every kernel the scenarios boot (each machine and variant),
# then the initramfs of every machine, then every Debian userland, one at a time.
build-all:
    #!/usr/bin/env bash
    set -euo pipefail
    {{sandbox}} kernels
    for m in $(PYTHONPATH={{quote(justfile_directory())}} {{python}} -c 'from sandbox.base.machines import MACHINES; print(*MACHINES)'); do
        {{sandbox}} initramfs --machine "$m"
    done
    {{sandbox}} userlands

# Unit tests, then every scenario on every machine (builds what is missing first),
# on every core: pytest-xdist, `-n auto` one and a half workers per core (pytest/y2038_plugin.py;
# `-n 0`: one at a time).
# `just test --tree 6.12` boots the 6.12 tree's kernels (`just kernels --tree 6.12` first
# builds them in view; else the first test that needs one builds it, out of view).
[positional-arguments]
test *args: deps build-all
    exec {{pytest}} -n auto "$@"

# Build (or reuse) every kernel the scenarios boot on a kernel source tree:
# `just kernels --tree 6.12` (default 6.1, what `just build-all` builds).
[positional-arguments]
kernels *args:
    exec {{sandbox}} kernels "$@"

# Unit tests only: no kernel, no boot.
[positional-arguments]
unit *args:
    exec {{pytest}} -n auto pytest/unit "$@"

# The suite (or the pytest arguments given) on other hosts, through pytest-xdist's
# SSH gateways: `just across --host [N*]HOST... [--dir D] [--ssh-config F] [args]`
# copies the repository to each host and runs there (docs/across-hosts.md).
[positional-arguments]
across *args:
    exec env PYTHONPATH={{quote(justfile_directory())}} {{python}} -m sandbox.app.across "$@"

# Run scenario files (all by default) and print the matrix.
[positional-arguments]
run *files:
    exec {{sandbox}} run "$@"

# Run one scenario and write what it observed into its probe steps that have no
# expectations yet, each group marked TODO for the author (docs/scenario-authoring.md).
record file machine="x86_64":
    exec {{sandbox}} record --machine {{quote(trim_start_match(machine, "machine="))}} {{quote(file)}}

# Rebuild results/<run>/report.html from a results folder's evidence, without
# booting (default: the newest folder under results/); prints its size and build time.
[positional-arguments]
report *folder:
    exec {{sandbox}} report "$@"

# Build each regression mutant kernel (kernel-series/regressions/) and run the
# scenarios that must catch it; prints mutant, killed or survived, and the catch.
# `just mutants --no-control` skips the control: each scenario first run on its
# mutant's kernel without the patch.
[positional-arguments]
mutants *args:
    exec {{sandbox}} mutants "$@"

# Check scenario files without booting.
[positional-arguments]
validate *files:
    exec {{sandbox}} validate "$@"

# Which of these binaries break in 2038: `just rehearse --static INPUT...` reads ELF
# files, directory trees, .debs or <userland>:<package> names, without booting;
# `just rehearse INPUT...` also runs each program before and after the rollover
# on its machine's series kernel (docs/rehearse.md); --json FILE keeps every record.
[positional-arguments]
rehearse *args:
    exec {{sandbox}} rehearse "$@"

# Whole systems with their own init across the rollover, a verdict per unit:
# `just system debian12-armhf` (rootfs/systems.toml) or your root filesystem's
# folder; --start/--end move the night (docs/system-rehearsal.md).
[positional-arguments]
system *args:
    exec {{sandbox}} system "$@"

# Build, boot and demo timings, printed as figures (--no-cold skips the 5-minute cold build).
[positional-arguments]
bench *args:
    exec {{sandbox}} bench "$@"

# --no-boot skips the signal trials (to just, Python and the process group while an
# x86_64 guest runs); docs/reliability.md keeps the output.
# Figures of hostile or careless use: malformed files, signals, kernel findings.
[positional-arguments]
reliability *args:
    exec env PYTHONPATH={{quote(justfile_directory())}} {{python}} -m sandbox.app.reliability "$@"

# Default the 6.1 tree on x86_64; --tree 6.12, and --machine i386 --machine
# armhf for the others; --from PATCH checks from that patch on, the ones
# before it applied and built once, unchecked.
# Check a tree's kernel series patch by patch: checkpatch --strict, git am, build.
[positional-arguments]
check-series *args:
    exec {{sandbox}} check-series "$@"
