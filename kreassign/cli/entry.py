"""Process entry point. Kept import-light: ``--version`` must not import Kafka clients, rich or pyspark."""

from __future__ import annotations

import sys


def _replace_unencodable_output() -> None:
    """Java prints an unencodable character (a lone surrogate quoted in a Jackson message) as '?';
    do the same instead of failing with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def main(argv: list[str] | None = None) -> int:
    _replace_unencodable_output()
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from kreassign import KAFKA_COMPAT_VERSION, __version__

        sys.stdout.write(f"{__version__} (kreassign; Apache Kafka {KAFKA_COMPAT_VERSION} compatible)\n")
        return 0  # ExitCode.OK, without importing cli.exit_codes on the fastest path
    try:
        from kreassign.cli.app import run

        return run(args)
    except KeyboardInterrupt:  # Ctrl-C before the command started: nothing was changed
        import signal

        from kreassign.cli.exit_codes import after_signal

        sys.stderr.write("Interrupted.\n")
        return after_signal(signal.SIGINT)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
