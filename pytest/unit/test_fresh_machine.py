"""The fresh-machine check's reading (sandbox/app/fresh_machine.py): the
README's set-up lines, the host's mirrors, the demo's phases, dpkg's totals.
The check itself is a benchmark (`just bench --fresh-machine`), not a test."""
from __future__ import annotations

import pytest

from sandbox.app.fresh_machine import (Packages, installed_sizes, mirror_lines, phase_seconds, setup_lines,
                                       simulated_apt_lines)
from sandbox.base.errors import InputError
from sandbox.base.paths import REPO

README = """# tool

## Set-up (fresh Debian 12)

Some words.

```sh
command -v npm || apt-get install -y npm   # only if missing
# a comment line

npm install -g rust-just
just demo    # the demo
just test
```
"""


def test_the_setup_lines_run_up_to_the_demo() -> None:
    assert setup_lines(README) == ["command -v npm || apt-get install -y npm   # only if missing",
                                   "npm install -g rust-just", "just demo    # the demo"]


def test_the_readme_of_the_repository_has_them() -> None:
    lines = setup_lines((REPO / "README.md").read_text())
    assert any("npm install -g rust-just" in line for line in lines) and lines[-1].startswith("just demo")


@pytest.mark.parametrize("text, problem", [
    ("# tool\n\n```sh\njust demo\n```\n", "no heading named 'Set-up'"),
    ("## Setup\n\nwords\n", "no ```sh block"),
    ("## Set up\n\n```sh\nnpm install -g rust-just\n```\n\n```sh\njust demo\n```\n", "no line starting 'just demo'"),
])
def test_a_readme_without_them_is_one_error_naming_the_file(text: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem) as caught:
        setup_lines(text, "README.md")
    assert str(caught.value).startswith("README.md")


def test_the_mirrors_come_from_both_source_formats() -> None:
    sources = {
        "debian.sources": "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
                          "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
                          "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n\n"
                          "Types: deb\nURIs: http://other/debian\nSuites: trixie\nComponents: main\n",
        "sources.list": "# old style\ndeb [arch=amd64] http://mirror/debian-security bookworm-security main contrib\n"
                        "deb-src http://mirror/debian bookworm main\n",
    }
    assert mirror_lines(sources) == ["deb http://deb.debian.org/debian bookworm main",
                                     "deb http://deb.debian.org/debian bookworm-updates main",
                                     "deb http://mirror/debian-security bookworm-security main contrib"]


def test_the_demo_phases_are_read_from_its_progress_lines() -> None:
    lines = [(0.5, "Reading package lists..."),
             (2.0, "==> installing 166 Debian package(s): ccache ..."),
             (90.0, "==> installing 166 Debian package(s): ccache ...: done in 88.0s"),
             (91.0, "==> unpacking linux-source-6.1.tar.xz (6.1.192-3) into /root/.cache ..."),
             (100.0, "==> kernel x86_64/series 31e2: configuring"),
             (700.0, "==> probes built"),  # names no phase: still the kernel's
             (800.0, "==> Building the x86_64 initramfs (abcd) ..."),
             (830.0, "==> running clock/rollover on x86_64 (tcg)"),
             (840.0, "==> unpacking userland debian12-i386 (120 packages) into /root ..."),
             (900.0, "==> running timers/armed on x86_64 (tcg)")]
    assert phase_seconds(lines, 1000.0) == {"packages": 91.0, "kernel": 709.0, "initramfs": 30.0,
                                            "runs": 10.0 + 100.0, "userlands": 60.0}


def test_dpkg_counts_only_installed_packages() -> None:
    status = "ii |1000\nii |24\nrc |500\nun |\nhi |\n"
    assert Packages.parse(status) == Packages(3, 1024)


SIMULATION = """\
NOTE: This is only a simulation!
Inst libtext-charwidth-perl (0.04-11 Debian:12.15/oldstable [amd64])
Inst libc6 [2.36-9+deb12u4] (2.36-9+deb12u13 Debian:12.15/oldstable [amd64])
Inst cowsay (3.03+dfsg2-8 Debian:12.15/oldstable [all])
Conf libtext-charwidth-perl (0.04-11 Debian:12.15/oldstable [amd64])
Conf cowsay (3.03+dfsg2-8 Debian:12.15/oldstable [all])
"""


def test_a_simulated_install_names_each_package_once_with_its_version() -> None:
    assert simulated_apt_lines(SIMULATION) == ["libtext-charwidth-perl=0.04-11", "libc6=2.36-9+deb12u13",
                                               "cowsay=3.03+dfsg2-8"]


def test_installed_sizes_add_up_every_stanza() -> None:
    show = "Package: a\nInstalled-Size: 92\n\nPackage: b\nInstalled-Size: 1024\nDescription: Installed-Size: 7\n"
    assert installed_sizes(show) == 1116
