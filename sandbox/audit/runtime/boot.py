"""One boot of the runtime audit: the machine's series kernel and initramfs,
the userlands the programs run in, and an overlay archive with the user's
own files and the EOVERFLOW shim; then the planned commands, one by one.

    boot_and_run(BootPlan, evidence) -> [Ran]

Nothing is judged here (sandbox/audit/runtime/verdict.py).
"""
from __future__ import annotations

import json
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from sandbox.audit.runtime.plan import AuditCommand
from sandbox.base import evidence as files
from sandbox.base.errors import SandboxError
from sandbox.base.evidence import Evidence
from sandbox.base.machines import Machine
from sandbox.base.progress import say
from sandbox.build import cpio
from sandbox.build.userland import UserlandArtifact, guest_memory_mib, tree_entries, with_userlands
from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import Guest, GuestDied, GuestHung
from sandbox.guest.target import Target
from sandbox.run import drive
from sandbox.run.drive import Driven
from sandbox.run.record import CommandRecord

MOUNT_POINTS = ("proc", "dev", "tmp")  # what sandbox/run/plan.py userland_commands mounts in a root


@dataclass(frozen=True)
class BootPlan:
    target: Target
    userlands: tuple[UserlandArtifact, ...]
    overlay: tuple[tuple[str, Path], ...]  # (member under the initramfs root, host file)
    commands: tuple[AuditCommand, ...]
    rtc: str  # ISO 8601, the first moment
    seconds: float  # the whole run's deadline, boot included
    trees: tuple[tuple[str, Path], ...] = ()  # (folder under the initramfs root, host tree): whole

    @property
    def machine(self) -> Machine:
        return self.target.machine


Ran = CommandRecord[AuditCommand]
"""One program run (or set-up command) of the boot: the drive loop's record."""


class GuestFailed(SandboxError):
    """The guest hung, died or lost its agent: every program of the boot is without a verdict."""


def overlay_archive(overlay: tuple[tuple[str, Path], ...], folder: Evidence,
                    trees: tuple[tuple[str, Path], ...] = ()) -> Path:
    """The user's root filesystems whole (with /proc, /dev and /tmp to mount
    on), then the single files, then the shim: the boot's OVERLAY file."""
    entries = _folders_once([e for prefix, tree in trees for e in tree_entries(tree, prefix)])
    entries += [cpio.Entry.directory(f"{prefix}/{name}") for prefix, _ in trees for name in MOUNT_POINTS
                if not (_tree_has(trees, prefix, name))]
    entries += [cpio.Entry.file(member, path.read_bytes(), stat.S_IMODE(path.stat().st_mode) | 0o555)
                for member, path in overlay]
    with folder.stream_bytes(files.OVERLAY) as stream:
        cpio.write_newc(cpio.with_parents(entries), stream)
    return folder.path(files.OVERLAY)


def _folders_once(entries: list[cpio.Entry]) -> list[cpio.Entry]:
    """Every tree brings its parent folders (userlands/): each written once."""
    folders: set[str] = set()
    kept = []
    for entry in entries:
        if stat.S_ISDIR(entry.mode):
            if entry.name in folders:
                continue
            folders.add(entry.name)
        kept.append(entry)
    return kept


def _tree_has(trees: tuple[tuple[str, Path], ...], prefix: str, name: str) -> bool:
    tree = dict(trees)[prefix]
    return (tree / name).is_dir() and not (tree / name).is_symlink()


def initramfs_for(plan: BootPlan, evidence: Path) -> Path:
    """The machine's initramfs, the userlands' archives, then the overlay
    (the kernel unpacks concatenated archives in order)."""
    base = with_userlands(plan.target.initramfs.path, plan.userlands)
    if not plan.overlay and not plan.trees:
        return base
    folder = Evidence(evidence)
    combined = folder.path(files.REHEARSE_INITRAMFS)
    with folder.stream(files.REHEARSE_INITRAMFS, "wb") as out:
        with base.open("rb") as source:
            shutil.copyfileobj(source, out)
        with overlay_archive(plan.overlay, folder, plan.trees).open("rb") as source:
            shutil.copyfileobj(source, out)
    return combined


def boot_and_run(plan: BootPlan, evidence: Path) -> list[CommandRecord[AuditCommand]]:
    evidence.mkdir(parents=True, exist_ok=True)
    initramfs = initramfs_for(plan, evidence)
    added = initramfs.stat().st_size - plan.target.initramfs.path.stat().st_size
    request = plan.target.boot(plan.rtc, evidence, initramfs=initramfs, memory_mib=guest_memory_mib(added))
    deadline = Deadline(plan.seconds)
    driven: Driven[AuditCommand] = Driven()
    done = driven.records
    try:
        with Guest(request) as guest:
            try:
                drive.boot(guest, deadline, driven)
                say(f"{plan.machine.name}: booted in {guest.boot_seconds:.1f} s, "
                    f"{sum(c.kind == 'run' for c in plan.commands)} runs to go")
                drive.run_commands(guest, plan.commands, deadline, driven)
                if driven.failed is not None:
                    failed = driven.failed
                    raise GuestFailed(f"guest command failed (exit {failed.exit_code}): {failed.command.shell}: "
                                      f"{(failed.stderr or failed.stdout).strip()[:200]}")
            finally:
                guest.stop()
    except (GuestHung, GuestDied, protocol.ProtocolError) as err:
        raise GuestFailed(f"{plan.machine.name} guest: {type(err).__name__}: {err} "
                          f"(evidence: {evidence})") from None
    finally:
        Evidence(evidence).write(files.RUNS, "".join(
            json.dumps({"kind": r.command.kind, "shell": r.command.shell, "exit": r.exit_code,
                        "stdout": r.stdout, "stderr": r.stderr, "seconds": round(r.seconds, 3)}) + "\n"
            for r in done))
    return done
