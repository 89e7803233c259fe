"""The user's own kernel as the command line gives it (`--kernel IMAGE
--kernel-config CONFIG` or `--kernel-tree PATH`), for every verb that boots
one: run, rehearse, system."""
from __future__ import annotations

import argparse

from sandbox.app.caller import caller_path
from sandbox.base.errors import SandboxError
from sandbox.base.machines import machine
from sandbox.build.kernel_tree import build_tree
from sandbox.build.own_kernel import OwnKernel, own_kernel


def own_kernel_of(args: argparse.Namespace) -> OwnKernel | None:
    """--kernel IMAGE --kernel-config CONFIG, or --kernel-tree PATH built for
    the machine (--machine; rehearse: None, the machine of the tree's .config), checked
    (sandbox/build/own_kernel.py, sandbox/build/kernel_tree.py), or None."""
    if args.kernel_tree and (args.kernel or args.kernel_config):
        raise SandboxError("--kernel-tree PATH replaces --kernel IMAGE --kernel-config CONFIG: give one or the other")
    if args.kernel_tree:
        wanted = args.machine  # rehearse: None unless given, the tree's .config decides
        return build_tree(caller_path(args.kernel_tree), machine(wanted) if wanted else None)
    if bool(args.kernel) != bool(args.kernel_config):
        raise SandboxError("--kernel IMAGE and --kernel-config CONFIG go together")
    return own_kernel(caller_path(args.kernel), caller_path(args.kernel_config)) if args.kernel else None
