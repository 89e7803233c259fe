"""Command line: the verbs the justfile calls."""
from __future__ import annotations

import argparse
import sys

from .errors import SandboxError
from .kernel import KernelRequest, build_kernel
from .machines import machine


def cmd_kernel(args: argparse.Namespace) -> int:
    artifact = build_kernel(KernelRequest(machine(args.machine), args.variant))
    print(artifact.boot_image)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sandbox", description="y2038 rollover sandbox")
    sub = p.add_subparsers(dest="command", required=True)
    k = sub.add_parser("kernel", help="build (or reuse) a kernel")
    k.add_argument("--machine", default="x86_64")
    k.add_argument("--variant", default="series", choices=["series", "pristine"])
    k.set_defaults(func=cmd_kernel)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except SandboxError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
