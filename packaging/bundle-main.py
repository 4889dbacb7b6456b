"""The entry of kreassign's self-contained bundle, run by its carried interpreter (``python3 -I``) from
bin/kafka-reassign-partitions: argv[1] is the name the command was invoked by (its --help says that name)."""

import sys

sys.argv[:2] = sys.argv[1:2]

from kreassign.cli.entry import main  # noqa: E402

sys.exit(main())
