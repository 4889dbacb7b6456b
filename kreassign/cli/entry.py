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


def _open_closed_outputs() -> None:
    """Started with stdout or stderr closed (``2>&-``): they go to /dev/null, so that writes to them are
    quiet and no file opened later takes their descriptor (a Kafka client's log would land in it)."""
    import os

    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, "w", closefd=False))  # noqa: SIM115 -- the process's own stream


def main(argv: list[str] | None = None) -> int:
    """Runs the command of ``argv`` and returns its exit status. Without ``argv`` (the process's own command
    line: the console scripts, ``python -m kreassign``) the process ends here (:func:`exit_now`)."""
    code = _main(argv)
    if argv is None:
        exit_now(code)
    return code


def exit_now(code: int) -> None:
    """Ends the process with ``code`` once its output is flushed and its exit handlers have run (the key
    material's folders removed, say), without the interpreter's teardown of every module and object: nothing
    kreassign keeps needs it, and it was the longest part of the end of a batched run, measured on a real one
    (0.4 s on an idle machine, 1.1 to 2.9 s with a producer and a --watch running beside it). With a thread
    still running (a Spark session's), the interpreter's normal exit, which waits for it."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a broken pipe, a closed stream: quiet, as the interpreter would not be
        _quiet_after_broken_pipe()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def _main(argv: list[str] | None) -> int:
    _open_closed_outputs()
    _replace_unencodable_output()
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from kreassign import KAFKA_COMPAT_VERSION, __version__

        try:
            sys.stdout.write(f"{__version__} (kreassign; Apache Kafka {KAFKA_COMPAT_VERSION} compatible)\n")
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_after_broken_pipe()
        return 0  # ExitCode.OK, without importing cli.exit_codes on the fastest path
    try:
        from kreassign.cli.app import run

        return run(args)
    except BrokenPipeError:  # a write that did not go through the command's writers: stop, quietly
        _quiet_after_broken_pipe()
        return 1
    except KeyboardInterrupt:  # Ctrl-C before the command started: nothing was changed
        import signal

        from kreassign.cli.exit_codes import after_signal

        sys.stderr.write("Interrupted.\n")
        return after_signal(signal.SIGINT)


def _quiet_after_broken_pipe() -> None:
    """stdout and stderr to /dev/null: the interpreter's flush at exit must not fail again and print."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
