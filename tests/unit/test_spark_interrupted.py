"""A Ctrl-C that py4j turns into an error of its own ends as an interrupt (exit 130, one line), not as a Spark
failure (exit 1): seen in CI, where the interrupt reached py4j while it sent a command and its clean-up raised
"Gateway must be connected to send cancel cmd." in place of the KeyboardInterrupt."""

from __future__ import annotations

import pytest

from kreassign.spark import interrupted


def raised_while_interrupted() -> BaseException:
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("Gateway must be connected to send cancel cmd.")  # noqa: B904 (as py4j does)
    except RuntimeError as exc:
        return exc
    raise AssertionError("unreachable")


def test_an_error_raised_while_a_ctrl_c_is_handled_is_the_interrupt():
    assert interrupted(raised_while_interrupted())
    try:
        raise ValueError("wrapped") from raised_while_interrupted()
    except ValueError as exc:
        assert interrupted(exc)


def test_other_errors_are_not():
    assert not interrupted(RuntimeError("Spark failed"))
    try:
        try:
            raise OSError("broken pipe")
        except OSError:
            raise RuntimeError("then this")  # noqa: B904
    except RuntimeError as exc:
        assert not interrupted(exc)


def test_the_spark_engine_reports_it_as_an_interrupt(monkeypatch):
    """plan_balanced_spark, whose pipeline fails that way: KeyboardInterrupt (the CLI prints Interrupted.)."""
    import kreassign.spark.pipeline as pipeline  # pyspark: ./scripts/test installs the spark extra
    from kreassign.planning.context import make_context
    from kreassign.spark import plan_balanced_spark

    def fail(*args, **kwargs):
        raise raised_while_interrupted()

    monkeypatch.setattr(pipeline, "run_pipeline", fail)
    with pytest.raises(KeyboardInterrupt):
        plan_balanced_spark("unused.jsonl", ["t"], make_context([(1, None)], None), session=object())
