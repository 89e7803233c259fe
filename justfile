# y2038 rollover sandbox. `just` or `just --list` shows the recipes, the user's first.
# Python runs as /usr/bin/python3: Debian's python3-* packages live there.
#
# Every value that reaches the shell is "$@" in a [positional-arguments] recipe
# (or quote()): a file named 'x$(touch pwned).toml' stays a name, a name with a
# space stays one path. The recipes `exec` Python, so a signal to `just` (SIGTERM,
# which just forwards) or to the recipe's process reaches Python itself, which
# stops QEMU and records the run as interrupted. The recipe's process is a small
# parent (sandbox/app/supervisor.py) that forwards the signal to the Python doing
# the work and exits 128 + n when that one is killed outright (137 for SIGKILL),
# where `just` alone would say 1, the code of a failed expectation. Every verb that takes a machine
# takes it as --machine NAME (x86_64, i386, armhf: sandbox/base/machines.py).
#
# Quiet: no recipe line is echoed, and a failing recipe adds no "recipe failed"
# line after the sandbox's own one-line error (its exit code is kept).
# `python3 -m sandbox` installs the Debian packages that are missing before any
# verb (sandbox/__main__.py), so every recipe works on a fresh machine.

set quiet
set no-exit-message
set positional-arguments

python := "/usr/bin/python3"
sandbox := "env PYTHONPATH=" + quote(justfile_directory()) + " Y2038_CALLER_DIR=" + quote(invocation_directory()) + " " + python + " -m sandbox"
pytest := "env PYTHONPATH=" + quote(justfile_directory() + ":" + justfile_directory() + "/pytest") + " " + python + " -m sandbox.app.supervisor -m pytest -c pytest/pytest.ini --rootdir ."

# The recipes, in two groups: the user's, then the sandbox's own authors'.
[private]
default:
    exec {{quote(just_executable())}} --justfile {{quote(justfile())}} --list --unsorted

# Build what is missing, boot at 2038-01-19T03:13:50 and show the rollover: `just demo [--machine M] [--live]`, `just demo system`.
[group('use')]
demo *args:
    exec {{sandbox}} demo "$@"

# Unit tests, then every scenario on every machine, on every core (`-n 0`: one at a time; `--tree 6.12`).
[group('use')]
test *args: deps lint build-all
    exec {{pytest}} -n auto "$@"

# Run scenario files and print their matrices: `just run [--machine M] FILE...` (no file: usage).
[group('use')]
run *args:
    exec {{sandbox}} run "$@"

# Which binaries break in 2038: `just rehearse [--static] INPUT...` (ELF, tree, .deb, userland:package).
[group('use')]
rehearse *args:
    exec {{sandbox}} rehearse "$@"

# Run one scenario, write what it observed into its steps as TODO expectations: `just record [--machine M] FILE`.
[group('use')]
record *args:
    exec {{sandbox}} record "$@"

# Check scenario files without booting: `just validate [FILE...]` (default: all).
[group('use')]
validate *args:
    exec {{sandbox}} validate "$@"

# Rebuild report.html from a results folder's evidence, without booting: `just report [FOLDER]`.
[group('use')]
report *args:
    exec {{sandbox}} report "$@"

# Install the Debian packages of .ci/debian-packages.txt that are missing (as root).
[group('use')]
deps:
    exec {{sandbox}} deps

# Build (or reuse from the cache) the kernel and the initramfs of one machine: `just build [--machine M]`.
[group('use')]
build *args:
    exec {{sandbox}} build "$@"

# Build (or reuse) every kernel the scenarios boot, every initramfs, every Debian userland.
[group('use')]
build-all:
    exec {{sandbox}} build-all

# Whole systems with their own init across the rollover, a verdict per unit: `just system debian12-armhf` (or a scenarios/system/ file).
[group('use')]
system *args:
    exec {{sandbox}} system "$@"

# The suite on other hosts over SSH: `just across --host [N*]HOST... [--dir D] [pytest args]`.
[group('use')]
across *args:
    exec {{sandbox}} across "$@"

# Unit tests only: no kernel, no boot.
[group('work on the sandbox')]
unit *args: deps
    exec {{pytest}} -n auto pytest/unit "$@"

# Build (or reuse) every kernel the scenarios boot on a source tree: `just kernels [--tree 6.12]`.
[group('work on the sandbox')]
kernels *args:
    exec {{sandbox}} kernels "$@"

# Build, boot, demo and suite timings as figures (`--no-cold`, `--speed`, `--fresh-machine`, ...).
[group('work on the sandbox')]
bench *args:
    exec {{sandbox}} bench "$@"

# Build each regression mutant kernel, run the scenarios that must catch it: killed or survived.
[group('work on the sandbox')]
mutants *args:
    exec {{sandbox}} mutants "$@"

# Check a tree's kernel series patch by patch: checkpatch --strict, git am, build (`--tree`, `--machine`, `--from`).
[group('work on the sandbox')]
check-series *args:
    exec {{sandbox}} check-series "$@"

# Lint: pyflakes and mypy (mypy.ini) over sandbox/ and pytest/; `just test` runs it first.
[group('work on the sandbox')]
lint:
    exec {{sandbox}} lint

# Figures of hostile or careless use: malformed files, signals, kernel findings (`--no-boot`).
[group('work on the sandbox')]
reliability *args:
    exec {{sandbox}} reliability "$@"
