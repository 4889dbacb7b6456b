from kreassign.cli.entry import main
import sys

sys.exit(main())
