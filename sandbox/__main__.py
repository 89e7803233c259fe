"""`python3 -m sandbox VERB ...`: the one entry point of every verb.

The Debian packages come first, for every verb: sandbox/build/deps.py
installs what is missing (one dpkg-query when all is there) before the
command line (sandbox/app/cli.py) is imported, because it imports Debian's
python3-* packages (python3-pyelftools, ...) that a fresh machine lacks.
Until then only the standard library and sandbox.base are imported.

Two processes: the first is a small parent (sandbox/app/supervisor.py) that
runs the same command as its child and maps the child's death by a signal
to 128 + n (137 for SIGKILL), never to a verdict's code."""
import sys

from sandbox.app import supervisor
from sandbox.build import deps


def main() -> int:
    if not supervisor.supervised():
        return supervisor.supervise(["-m", "sandbox", *sys.argv[1:]])
    if sys.argv[1:2] == ["deps"]:
        return deps.main(sys.argv[2:])
    failed = deps.bootstrap()
    if failed is not None:
        return failed
    from sandbox.app.cli import main as cli_main  # only now: its imports need the packages

    return cli_main()


sys.exit(main())
