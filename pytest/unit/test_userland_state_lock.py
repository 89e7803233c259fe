"""Two processes building one Debian userland share its private apt state
(sandbox/build/userland.py): the second waits for the first's `apt-get
update` and then finds the lists fresh, instead of running a second update
in the same lists folder (which took the first one's partial files)."""
from __future__ import annotations

import fcntl
import threading
from pathlib import Path

import pytest

from sandbox.build import userland
from sandbox.scenario.userlands import load_userlands


def test_an_update_waits_for_the_state_lock_and_is_not_repeated(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path))
    userlands = load_userlands()
    one = next(iter(userlands.by_name.values()))
    updates: list[list[str]] = []

    def apt(argv: list[str], what: str, cwd: Path | None = None) -> str:
        updates.append(argv)
        return ""

    monkeypatch.setattr(userland, "_apt", apt)
    state = userland._apt_dir(one)
    state.parent.mkdir(parents=True, exist_ok=True)
    done = threading.Event()

    def prepare() -> None:
        userland._prepare_state(one, userlands)
        done.set()

    with (state.parent / f"{state.name}.lock").open("w") as held:  # another process holds the state
        fcntl.flock(held, fcntl.LOCK_EX)
        worker = threading.Thread(target=prepare)
        worker.start()
        assert not done.wait(0.5), "prepared the apt state while another process held its lock"
        assert updates == []
    worker.join(30)
    assert done.is_set() and [a[-2:] for a in updates] == [["update", "-q"]]
    userland._prepare_state(one, userlands)  # the lists are fresh now: no second update
    assert len(updates) == 1
