"""The environment for `make -C rootfs` in a test: the host's, without the
variables rootfs/Makefile takes from it (a test names what it builds)."""
from __future__ import annotations

import os

MAKE_ENV = {key: value for key, value in os.environ.items()
            if key not in {"OUT", "CC", "CFLAGS32", "FLAVOURS", "TOOLS_FLAVOUR", "PROBES", "TOOLS"}}
