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


def _outcome(status, **kw):
    from kreassign.execution.executor import Outcome

    fields = dict(steps_done=9, partitions_done=6, partitions=6, elapsed=24.0, bytes_moved=6 * 1024**2)
    return Outcome(status, **{**fields, **kw})


def test_the_panels_last_frame_shows_how_the_run_ended(capsys):
    from kreassign.execution.journal import RunStatus
    from kreassign.model import TopicPartition

    written: list[str] = []
    reporter = make_reporter(written.append, terminal=True)
    reporter.start()
    reporter.progress(PROGRESS)
    outcome = _outcome(
        RunStatus.INTERRUPTED,
        steps_done=8,
        partitions_done=4,
        partitions=10,
        reverted=[TopicPartition("t", 1), TopicPartition("t", 2)],
        message="interrupted by SIGINT",
        signum=2,
    )
    reporter.finish(outcome)
    text = "".join(written)
    assert "interrupted by SIGINT" in text and "4 of 10 at their target" in text
    assert "the steps in flight of 2 partition(s)" in text and "8 of 20" in text
    reporter.stop()  # after finish: nothing more
    assert "".join(written) == text
    assert capsys.readouterr() == ("", "")


def test_outcome_line_for_the_terminal():
    from kreassign.cli.live import outcome_line
    from kreassign.execution.journal import RunStatus
    from kreassign.model import TopicPartition

    assert outcome_line(_outcome(RunStatus.COMPLETED), throttled=True) == (
        "Batched reassignment complete: 6 partition(s) at their target after 9 step(s); throttles restored. "
        "The summary is on stdout.\n"
    )
    interrupted = _outcome(
        RunStatus.INTERRUPTED, partitions_done=1, steps_done=4, reverted=[TopicPartition("t", 2)],
        message="interrupted by SIGINT", signum=2,
    )  # fmt: skip
    assert outcome_line(interrupted, throttled=False) == (
        "Batched reassignment interrupted by SIGINT: 1 of 6 partition(s) at their target after 4 step(s); "
        "reverted the steps in flight of 1 partition(s). The summary is on stdout.\n"
    )
    cancelled = _outcome(RunStatus.CANCELLED, partitions_done=3, message="cancelled by --cancel")
    assert outcome_line(cancelled, throttled=True).startswith("Batched reassignment cancelled by --cancel: 3 of 6")
