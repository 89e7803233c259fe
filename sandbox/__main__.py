"""`python3 -m sandbox VERB ...`: the command line (sandbox/app/cli.py).

`deps` is answered before the command line is imported: the other verbs need
Debian's python3-* packages (python3-pyelftools, ...), and `deps` is what
installs them on a fresh machine."""
import sys

if sys.argv[1:2] == ["deps"]:
    from sandbox.build.deps import main as deps_main

    sys.exit(deps_main(sys.argv[2:]))

from sandbox.app.cli import main  # noqa: E402 - after the deps dispatch, on purpose

sys.exit(main())
