"""kreassign in a real pseudo-terminal (pexpect), and what the terminal shows (pyte, a VT100 emulator).

A :class:`Terminal` runs ``python -m kreassign ARGS`` as the session leader of a new pty of ``cols`` x
``rows`` (the kernel's window size, what ``os.get_terminal_size`` reads), optionally with stdout sent to a
file by a shell as an operator would (``> out.txt``). Ctrl-C is the terminal's interrupt character, written
to the pty: the kernel sends SIGINT to the foreground process group, as at a keyboard.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte

THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


class Terminal:
    def __init__(
        self,
        args: list[str],
        cols: int,
        rows: int = 40,
        stdout_to: Path | None = None,
        cwd: Path | None = None,
        shell: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """``shell``: a command line for ``sh -c`` instead of kreassign (``{kreassign}`` in it is replaced by
        the command that runs this checkout's kreassign); ``env``: the environment (default: this process's)."""
        env = {k: v for k, v in (env or os.environ).items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
        env["TERM"] = "xterm-256color"
        kreassign = [sys.executable, "-m", "kreassign"]
        if shell is not None:
            argv = ["/bin/sh", "-c", shell.replace("{kreassign}", shlex.join(kreassign))]
        elif stdout_to is not None:  # the shell opens the file and execs: kreassign stays the pty's child
            argv = ["/bin/sh", "-c", 'out="$1"; shift; exec "$@" > "$out"', "sh", str(stdout_to), *kreassign, *args]
        else:
            argv = [*kreassign, *args]
        self.cols, self.rows = cols, rows
        self.screen = pyte.HistoryScreen(cols, rows, history=5000)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""
        self.eof = False
        self.child = pexpect.spawn(
            argv[0],
            argv[1:],
            dimensions=(rows, cols),
            env=env,
            cwd=str(cwd) if cwd else None,
            encoding="utf-8",
            codec_errors="replace",
        )
        # The interrupt character makes the kernel discard the output queued on the pty that the terminal has
        # not read yet (unless NOFLSH). A terminal emulator reads at once; this one reads when the test looks,
        # so what the program wrote just before a Ctrl-C (half a frame of the panel) would be lost here only.
        attrs = termios.tcgetattr(self.child.child_fd)
        attrs[3] |= termios.NOFLSH
        termios.tcsetattr(self.child.child_fd, termios.TCSANOW, attrs)

    # ---------------------------------------------------------------- reading the screen
    def _pump(self, timeout: float) -> None:
        if self.eof:
            time.sleep(min(timeout, 0.05))
            return
        try:
            data = self.child.read_nonblocking(size=65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            self.eof = True
            return
        self.raw += data
        self.stream.feed(data)

    def display(self) -> list[str]:
        """The screen as it is now, each line without its trailing blanks."""
        return [line.rstrip() for line in self.screen.display]

    def lines(self) -> list[str]:
        """Everything shown so far: the lines scrolled off the top, then the screen."""
        scrolled = ["".join(line[x].data for x in range(self.cols)).rstrip() for line in self.screen.history.top]
        return scrolled + self.display()

    def text(self) -> str:
        return "\n".join(self.lines())

    def wait_for(self, predicate: Callable[[Terminal], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}; the screen:\n{self.text()}")
            if self.eof and not predicate(self):
                raise AssertionError(f"the program ended before {what}; the screen:\n{self.text()}")
            self._pump(0.1)

    def shows(self, text: str) -> bool:
        return text in self.text()

    # ---------------------------------------------------------------- keys and the end
    def ctrl_c(self) -> None:
        self.child.sendintr()

    def pause(self, seconds: float) -> None:
        """Wait, reading what the program shows meanwhile."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._pump(min(0.05, max(0.0, deadline - time.monotonic())))

    def wait(self, timeout: float) -> int:
        """The exit status once the program has ended (128 + N if a signal N ended it); raises if it is
        still running after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            if time.monotonic() > deadline:
                raise AssertionError(f"still running after {timeout}s; the screen:\n{self.text()}")
            self._pump(0.2)
        self.child.wait()
        if self.child.signalstatus is not None:
            return 128 + self.child.signalstatus
        return self.child.exitstatus

    def kill(self) -> None:
        """SIGKILL if still running (a test that failed must not leave its run behind)."""
        if self.child.isalive():
            os.kill(self.child.pid, signal.SIGKILL)
            self.child.wait()


def throttles(port, brokers, topics: list[str]) -> dict[str, dict[str, str]]:
    """The throttle configs set on these brokers and topics."""
    from kreassign.cluster.port import ConfigResource, ResourceType

    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in brokers]
    resources += [ConfigResource(ResourceType.TOPIC, t) for t in topics]
    return {
        f"{r.type.value}:{r.name}": v
        for r, values in port.describe_configs(resources).items()
        if (v := {k: values[k] for k in THROTTLE_KEYS if k in values})
    }


def throttles_once_applied(port, brokers, topics: list[str], settle: float = 15.0) -> dict:
    """:func:`throttles`, read again for up to ``settle`` seconds while any is left: a broker applies a config
    change a moment after the controller accepts it (a rate that is really left stays)."""
    last = throttles(port, brokers, topics)
    deadline = time.monotonic() + settle
    while last and time.monotonic() < deadline:
        time.sleep(0.5)
        last = throttles(port, brokers, topics)
    return last


def remove_throttles(port, brokers, topics: list[str]) -> None:
    """Clean-up after a failed test: delete every throttle config of these brokers and topics."""
    from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType

    changes = {
        ConfigResource(ResourceType.BROKER, str(b)): [ConfigOp(k, OpType.DELETE) for k in THROTTLE_KEYS[:3]]
        for b in brokers
    }
    for t in topics:
        changes[ConfigResource(ResourceType.TOPIC, t)] = [ConfigOp(k, OpType.DELETE) for k in THROTTLE_KEYS[3:]]
    port.incremental_alter_configs(changes)
