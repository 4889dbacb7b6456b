import sys

from kreassign.cli.entry import main

sys.exit(main())
