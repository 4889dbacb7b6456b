"""Runs one legacy action from a validated command line (``kreassign.cli.app`` calls this when
``--zookeeper`` is given), reading inputs in Kafka 2.8's order so that the first error matches."""

from __future__ import annotations

from collections.abc import Callable

from kreassign.actions.common import Output, read_input_file

DEPRECATION_WARNING = (
    "Warning: --zookeeper is deprecated (Apache Kafka removed it in 3.0): use --bootstrap-server instead."
)


def open_zookeeper(args, err: Callable[[str], object]):
    """Print the deprecation warning on stderr, then connect (a :class:`ZnodeStore` to close)."""
    from kreassign.zookeeper.store import connect

    err(DEPRECATION_WARNING + "\n")
    return connect(args.value("zookeeper"))


def _parse_plan(text: str):
    """The reassignment JSON, with Kafka 2.8's texts for bad input."""
    from kreassign.errors import CommandError
    from kreassign.formats import parse_reassignment_json
    from kreassign.zookeeper.jsontexts import kafka_2_8_message

    try:
        return parse_reassignment_json(text)
    except CommandError as exc:
        raise CommandError(kafka_2_8_message(exc.message, text)) from exc


def run_zookeeper_action(action: str, args, store, out: Output) -> None:
    from kreassign.zookeeper import legacy

    if action == "verify":
        plan = _parse_plan(read_input_file(args.value("reassignment-json-file")))
        legacy.verify_assignment(store, plan, preserve_throttles=args.has("preserve-throttles"), out=out)
    elif action == "generate":
        text = read_input_file(args.value("topics-to-move-json-file"))
        legacy.generate_assignment(
            store,
            text,
            args.value("broker-list"),
            rack_aware=not args.has("disable-rack-aware"),
            seed=args.long_value("seed"),
            out=out,
        )
    elif action == "execute":
        text = read_input_file(args.value("reassignment-json-file"))
        throttle = args.long_value("throttle")
        legacy.execute_assignment(store, _parse_plan(text), throttle=throttle, out=out)
    else:  # pragma: no cover - argv validation lets only these three through
        raise RuntimeError("Unsupported action.")
