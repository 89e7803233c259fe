# y2038 rollover sandbox. `just --list` shows the recipes.
# Python runs as /usr/bin/python3: Debian's python3-* packages live there.

python := "/usr/bin/python3"
sandbox := "PYTHONPATH=" + justfile_directory() + " " + python + " -m sandbox"
pytest := "PYTHONPATH=" + justfile_directory() + ":" + justfile_directory() + "/pytest " + python + " -m pytest -c pytest/pytest.ini --rootdir ."
# demo and build take a machine (sandbox/base/machines.py: x86_64, i386, armhf), as
# `just demo armhf` or `just demo machine=armhf`.

# Build what is missing, boot at 2038-01-19T03:13:50 and show the rollover.
demo machine="x86_64":
    {{sandbox}} demo --machine {{trim_start_match(machine, "machine=")}}

# Install the Debian packages listed in .ci/debian-packages.txt (root).
deps:
    {{sandbox}} deps

# Build (or reuse from the cache) the kernel and the initramfs of one machine.
build machine="x86_64":
    {{sandbox}} kernel --machine {{trim_start_match(machine, "machine=")}}
    {{sandbox}} initramfs --machine {{trim_start_match(machine, "machine=")}}

# Build (or reuse) every kernel the scenarios boot (each machine and variant),
# then the initramfs of every machine, one at a time.
build-all:
    #!/usr/bin/env bash
    set -euo pipefail
    {{sandbox}} kernels
    for m in $(PYTHONPATH={{justfile_directory()}} {{python}} -c 'from sandbox.base.machines import MACHINES; print(*MACHINES)'); do
        {{sandbox}} initramfs --machine "$m"
    done

# Unit tests, then every scenario on every machine (builds what is missing first).
test *args: deps build-all
    {{pytest}} {{args}}

# Unit tests only: no kernel, no boot.
unit *args:
    {{pytest}} pytest/unit {{args}}

# Run scenario files (all by default) and print the matrix.
run *files:
    {{sandbox}} run {{files}}

# Run one scenario and write what it observed into its probe steps that have no
# expectations yet, each group marked TODO for the author (docs/scenario-authoring.md).
record file machine="x86_64":
    {{sandbox}} record --machine {{trim_start_match(machine, "machine=")}} {{quote(file)}}

# Rebuild results/<run>/report.html from a results folder's evidence, without
# booting (default: the newest folder under results/); prints its size and build time.
report *folder:
    {{sandbox}} report {{folder}}

# Check scenario files without booting.
validate *files:
    {{sandbox}} validate {{files}}

# Build, boot and demo timings, printed as figures (--no-cold skips the 5-minute cold build).
bench *args:
    {{sandbox}} bench {{args}}

# Check kernel-series/ patch by patch: checkpatch --strict, git am, incremental
# build (default x86_64; add --machine i386 --machine armhf for the others).
check-series *args:
    {{sandbox}} check-series {{args}}
