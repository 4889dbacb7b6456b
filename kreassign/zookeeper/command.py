"""What the deprecated ``--zookeeper`` path of the command line (``kreassign.cli.commands.zookeeper``) needs:
the deprecation warning and the connection, and Kafka 2.8's texts for a bad reassignment JSON."""

from __future__ import annotations

from collections.abc import Callable

#: Kafka 2.8.2's first stdout line on this path (``ReassignPartitionsCommand.main``, before it connects)
DEPRECATION_WARNING = "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka."
#: kreassign's advice, on stderr
DEPRECATION_ADVICE = (
    "kreassign: --zookeeper is deprecated (Apache Kafka removed it in 3.0): use --bootstrap-server instead."
)


def open_zookeeper(args, out: Callable[[str], object], err: Callable[[str], object]):
    """Print Kafka 2.8.2's deprecation line on stdout and kreassign's advice on stderr, then connect (a
    :class:`ZnodeStore` to close)."""
    from kreassign.zookeeper.store import connect

    out(DEPRECATION_WARNING + "\n")
    err(DEPRECATION_ADVICE + "\n")
    return connect(args.value("zookeeper"))


def parse_plan(text: str):
    """The reassignment JSON, with Kafka 2.8's texts for bad input."""
    from kreassign.errors import CommandError
    from kreassign.formats import parse_reassignment_json
    from kreassign.zookeeper.jsontexts import kafka_2_8_message

    try:
        return parse_reassignment_json(text)
    except CommandError as exc:
        raise CommandError(kafka_2_8_message(exc.message, text)) from exc
