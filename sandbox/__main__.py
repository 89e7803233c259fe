import sys

from sandbox.app.cli import main

sys.exit(main())
