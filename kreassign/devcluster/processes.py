"""The processes the harness starts: free 127.0.0.1 ports for them, and their death with the process that
started them (the brokers, the KDC, the identity provider, the Spark servers of the tests)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket


def die_with_parent(signum: int = signal.SIGKILL):
    """A function for the child before exec: ask Linux to send it ``signum`` when the process that
    started it dies, so a killed test run never leaves brokers (or the Spark servers of the tests) behind. If that process already died
    between the fork and this call (no signal would come), the child ends itself at once."""
    parent = os.getpid()

    def arrange() -> None:
        import ctypes

        PR_SET_PDEATHSIG = 1
        with contextlib.suppress(Exception):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signum)
        if os.getppid() != parent:
            os.kill(os.getpid(), signum)

    return arrange


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
