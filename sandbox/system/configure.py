"""The system's configuration by its own maintainer scripts, in a guest of its
architecture (a foreign root cannot run them on the host: no binfmt_misc
here, and registering one would change the host): the unconfigured image
below an overlay, `dpkg --configure -a` chrooted into it by our agent, and
the overlay's upper layer (what the scripts wrote) back to the host as a tar."""
from __future__ import annotations

import shlex
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.progress import say
from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import Guest, GuestDied, GuestHung
from sandbox.run import drive
from sandbox.run.drive import Asked, Driven
from sandbox.system.machine import SystemBoot

ROOT = "/system/root"
UPPER = "/system/rw/upper"
CONFIGURE_SECONDS = 1800.0
READY_SECONDS = 120.0
ENV = "env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C"
FIRST_PREINSTS = ("base-passwd",)  # /etc/passwd and /etc/group, before any script adds a user

MOUNTS = (f"mount -t proc proc {ROOT}/proc && mount -t sysfs sys {ROOT}/sys && mount -o bind /dev {ROOT}/dev"
          f" && mount -t tmpfs tmp {ROOT}/tmp && mount -t tmpfs run {ROOT}/run")
UNMOUNTS = f"umount {ROOT}/run {ROOT}/tmp {ROOT}/dev {ROOT}/sys {ROOT}/proc"


def configure_script(policy_rc_d: str) -> str:
    """What runs chrooted into the system: no service may start (policy-rc.d),
    every preinst as `install` (base-passwd's first), then dpkg --configure -a."""
    first = " ".join(FIRST_PREINSTS)
    return "\n".join((
        "set -u",
        f"printf '#!/bin/sh\\nexit 101\\n' > /{policy_rc_d} && chmod 755 /{policy_rc_d}",
        f"for p in {first}; do /var/lib/dpkg/info/$p.preinst install || echo \"preinst $p: $?\"; done",
        "for f in /var/lib/dpkg/info/*.preinst; do p=${f##*/}; p=${p%.preinst}",
        f"  case \" {first} \" in *\" $p \"*) continue;; esac",
        "  \"$f\" install >/dev/null 2>&1 || echo \"preinst $p: $?\"; done",
        "dpkg --configure -a; status=$?",
        f"rm -f /{policy_rc_d}",
        "exit $status",
    ))


def configure(boot: SystemBoot, policy_rc_d: str, upper_tar: Path) -> str:
    """Boots the unconfigured image, configures it and writes the upper layer
    to upper_tar; returns dpkg's output (kept as configure.log)."""
    deadline = Deadline(CONFIGURE_SECONDS)
    script = configure_script(policy_rc_d)
    try:
        with Guest(boot.request()) as guest:
            driven: Driven[Asked] = Driven()
            drive.boot(guest, deadline, driven, READY_SECONDS)

            def ask(shell: str) -> protocol.Reply:
                return drive.run_one(guest, Asked(shell), deadline, driven)

            mounted = ask(MOUNTS)
            if mounted.exit_code != 0:
                raise SandboxError(f"configuring {boot.image}: {mounted.stderr.decode(errors='replace').strip()}"
                                   f" (console: {boot.evidence / 'console.log'})")
            say(f"{boot.machine.name}: dpkg --configure -a in the guest (minutes under TCG)")
            ran = ask(f"chroot {ROOT} {ENV} /bin/sh -c {shlex.quote(script)} 2>&1")
            log = ran.text
            if ran.exit_code != 0:
                raise SandboxError(f"configuring {boot.image}: dpkg --configure -a exited {ran.exit_code}: "
                                   f"{log.strip().splitlines()[-1:] or ''} (log: {boot.evidence / 'agent.log'})")
            ask(UNMOUNTS)
            packed = ask(f"cd {UPPER} && tar -cf - . | gzip -1")
            if packed.exit_code != 0:
                raise SandboxError(f"configuring {boot.image}: the upper layer: {packed.stderr.decode(errors='replace')}")
            upper_tar.write_bytes(packed.stdout)
            return log
    except (GuestDied, GuestHung) as err:
        raise SandboxError(f"configuring {boot.image}: {err} (console: {boot.evidence / 'console.log'})") from None
