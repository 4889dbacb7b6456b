"""Process entry point. Kept import-light: ``--version`` must not import Kafka clients, rich or pyspark."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from kreassign import KAFKA_COMPAT_VERSION, __version__

        print(f"{__version__} (kreassign; Apache Kafka {KAFKA_COMPAT_VERSION} compatible)")
        return 0
    from kreassign.cli.app import run

    return run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
