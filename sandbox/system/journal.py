"""The system's journal files, read on the host by the host's journalctl
(`-o json`): the guest's own journalctl is a program of the system under
rehearsal, and may itself fail after the rollover."""
from __future__ import annotations

import subprocess
from pathlib import Path

from sandbox.system.observe import JournalEntry, journal_entries


def export_json(folder: Path) -> str:
    """Every entry of the journal files in folder, one JSON object a line."""
    files = sorted(folder.glob("*.journal"))
    if not files:
        return ""
    done = subprocess.run(["journalctl", "--no-pager", "-o", "json", "--all",
                           *(f"--file={f}" for f in files)], capture_output=True, text=True, check=False)
    return done.stdout


def read_journal(folder: Path) -> tuple[str, list[JournalEntry]]:
    text = export_json(folder)
    return text, journal_entries(text)
