"""The batched run's progress display writes only through the writer it is given (the CLI's injected
``err``): the rich panel on a terminal, plain lines otherwise. Nothing goes to the process's own streams."""

from __future__ import annotations

from kreassign.cli.live import PlainReporter, RichReporter, make_reporter
from kreassign.execution.executor import Progress

PROGRESS = Progress(
    partitions=10,
    done=4,
    moving=2,
    waiting=4,
    steps_done=7,
    steps_total=20,
    bytes_total=10 * 1024**3,
    bytes_moved=3 * 1024**3,
    rate=50 * 1024**2,
    eta=140.0,
    elapsed=60.0,
    notes=["t-3 waits for broker 2 (offline)"],
)


def test_the_rich_panel_is_written_through_the_injected_writer(capsys):
    written: list[str] = []
    reporter = make_reporter(written.append, terminal=True)
    assert isinstance(reporter, RichReporter)
    reporter.start()
    reporter.event("Started t-0: [1,2] -> [3,1,2]")
    reporter.progress(PROGRESS)
    reporter.stop()
    text = "".join(written)
    assert "Started t-0: [1,2] -> [3,1,2]" in text
    assert "kreassign batched reassignment" in text and "4 done, 2 moving, 4 waiting (of 10)" in text
    assert "t-3 waits for broker 2 (offline)" in text
    assert "\x1b[" in text  # a terminal: rich's control codes
    assert capsys.readouterr() == ("", "")


def test_plain_lines_when_not_a_terminal(capsys):
    written: list[str] = []
    reporter = make_reporter(written.append, terminal=False, interval=10.0)
    assert isinstance(reporter, PlainReporter)
    reporter.event("Started t-0")
    reporter.progress(PROGRESS)
    reporter.progress(PROGRESS)  # within the interval: once
    assert written == [
        "kreassign: Started t-0\n",
        "kreassign: 4/10 partitions done, 2 moving, 4 waiting; steps 7/20; 3.0 GiB of 10.0 GiB copied, "
        "50.0 MiB/s, ETA 0:02:20; elapsed 0:01:00\nkreassign:   t-3 waits for broker 2 (offline)\n",
    ]
    assert capsys.readouterr() == ("", "")
