"""The batched run's panel at a real 80-column terminal keeps one width from its first frame to its last, and its
bars fill its value column (issue 39: the panel widened from 56 to 60 columns when its writes row appeared, while
its bars stayed 40 wide). The writes row of 1023.9 MiB/s, the longest, stays one row. The panel is driven frame by
frame by a small program in the pty (the same reporter the batched run uses), so no cluster is needed."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.terminal.screen import Terminal

DRIVER = """
import sys, time
from pathlib import Path

from kreassign.cli.live import RichReporter
from kreassign.execution.journal import RunStatus
from kreassign.execution.outcome import Outcome, Progress

folder = Path(sys.argv[1])
frame = dict(partitions=4, done=1, moving=1, waiting=2, steps_done=2, steps_total=8, bytes_total=40 << 20,
             bytes_moved=10 << 20, rate=1 << 20, eta=30.0, elapsed=5.0)
reporter = RichReporter(sys.stderr.write)
reporter.start()
for step, extra in enumerate([{}, {"write_rate": 1073636556.0}, {"notes": ["a note longer than the value column of "
                                                                          "the panel, which wraps in it"]}]):
    reporter.progress(Progress(**{**frame, **extra}))
    while not (folder / f"next{step}").exists():
        time.sleep(0.05)
reporter.finish(Outcome(RunStatus.COMPLETED, 8, 4, 4, 12.0, 40 << 20))
"""

BAR = "━╸╺"


def panel_frame(terminal: Terminal) -> list[str]:
    """The panel on the screen: its rows from the top border to the bottom one."""
    lines = terminal.display()
    top = max((i for i, line in enumerate(lines) if line.startswith("╭")), default=None)
    bottom = next((i for i in range(top or 0, len(lines)) if lines[i].startswith("╰")), None)
    return [] if top is None or bottom is None else lines[top : bottom + 1]


def widths(frame: list[str]) -> tuple[set[int], set[int]]:
    """The widths of the panel's rows, and of its bars (each row's run of bar characters)."""
    bars = set()
    for line in frame:
        cells = [i for i, c in enumerate(line) if c in BAR]
        if cells:
            bars.add(cells[-1] - cells[0] + 1)
    return {len(line) for line in frame}, bars


def test_the_panel_keeps_one_width_and_its_bars_fill_it(tmp_path: Path):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    terminal = Terminal([], cols=80, shell=f"{sys.executable} {driver} {tmp_path}")
    seen = []
    try:
        for step, shown in enumerate(["ETA", "into the partitions being copied", "a note longer"]):
            terminal.wait_for(lambda t, shown=shown: shown in "\n".join(panel_frame(t)), 30, shown)
            terminal.pause(0.3)  # the frame drawn whole
            seen.append(widths(panel_frame(terminal)))
            (tmp_path / f"next{step}").touch()
        assert terminal.wait(timeout=30) == 0, terminal.text()
        seen.append(widths(panel_frame(terminal)))
    finally:
        terminal.kill()
    assert "complete" in "\n".join(panel_frame(terminal))
    assert [rows for rows, _ in seen] == [{62}] * 4, seen
    assert [bars for _, bars in seen] == [{46}] * 4, seen  # the value column: 62 less borders, labels and gap
