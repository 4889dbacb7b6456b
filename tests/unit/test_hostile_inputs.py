"""Hostile input never escapes as anything but a kreassign error.

A fuzz test gives the three JSON readers (``formats.parse_reassignment_json``,
``formats.parse_topics_to_move_json`` and ``jackson_reader.read_tree``) thousands of documents: random text,
random bytes through the file decoder, valid JSON of every shape, and valid JSON cut or spliced. Each
must give a value or an ``InvalidJsonError`` / ``CommandError``; the plans that parse also go through
``validate_execute_plan``. The journal reader gets the same treatment for corrupt journal files.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreassign import formats
from kreassign.errors import CommandError
from kreassign.execution.journal import Journal
from kreassign.javacompat import jackson_reader

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(["t", "topic", "partition", "replicas", "log_dirs", "version", "partitions", "topics", "any"]),
)
_KEYS = st.sampled_from(["version", "partitions", "topics", "topic", "partition", "replicas", "log_dirs", "x"])
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=5)),
    max_leaves=12,
)
# documents shaped like the real inputs, with any field of any type
_PARTITION = st.fixed_dictionaries(
    {},
    optional={
        "topic": st.one_of(st.text(max_size=5), _SCALARS),
        "partition": st.one_of(st.integers(min_value=-3, max_value=3), _SCALARS),
        "replicas": st.one_of(st.lists(st.integers(min_value=-2, max_value=4), max_size=4), _VALUES),
        "log_dirs": st.one_of(st.lists(st.sampled_from(["any", "/d", 1]), max_size=4), _VALUES),
    },
)
_SHAPED = st.fixed_dictionaries(
    {},
    optional={
        "version": st.one_of(st.just(1), _SCALARS),
        "partitions": st.one_of(st.lists(_PARTITION, max_size=4), _VALUES),
        "topics": st.one_of(st.lists(st.dictionaries(st.just("topic"), _SCALARS), max_size=3), _VALUES),
    },
)
_JSON_TEXT = st.one_of(_VALUES, _SHAPED).map(lambda v: json.dumps(v, ensure_ascii=False))
_JSONISH = st.text(alphabet='{}[]:,"\\ 0123456789.eE+-truefalsnl\n\t\u00e9\ud800', max_size=40)


@st.composite
def _spliced(draw) -> str:
    """Valid JSON, then cut, with something inserted, or repeated."""
    text = draw(_JSON_TEXT)
    cut = draw(st.integers(min_value=0, max_value=len(text)))
    insert = draw(st.one_of(st.just(""), _JSONISH, st.sampled_from(["[" * 1200, "9" * 1200, '"\\u12', "\x00"])))
    return text[:cut] + insert + text[cut:]


_DOCUMENTS = st.one_of(
    _JSON_TEXT,
    _spliced(),
    _JSONISH,
    st.text(max_size=30),
    st.binary(max_size=40).map(formats.decode_file_bytes),
)


def _either_value_or_our_error(reader, text: str):
    try:
        return reader(text)
    except CommandError:  # InvalidJsonError and the Jackson errors are CommandErrors
        return None


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOCUMENTS)
def test_json_readers_give_a_value_or_a_kreassign_error(text):
    _either_value_or_our_error(jackson_reader.read_tree, text)
    _either_value_or_our_error(formats.parse_topics_to_move_json, text)
    plan = _either_value_or_our_error(formats.parse_reassignment_json, text)
    if plan is not None:
        _either_value_or_our_error(formats.validate_execute_plan, plan)


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, "{" + '"a":{' * 100_000, "[" * 100_000 + "]" * 100_000, "-" + "9" * 100_000, '"' + "a" * 100_000],
    ids=["arrays-100000", "objects-100000", "closed-arrays-100000", "digits-100000", "open-string"],
)
def test_extreme_documents_give_one_error(text):
    for reader in (jackson_reader.read_tree, formats.parse_topics_to_move_json, formats.parse_reassignment_json):
        with pytest.raises(CommandError):
            reader(text)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "[]",
        "null",
        "42",
        '"journal"',
        "{not json",
        '{"kind":"kreassign-journal","version":1}',
        '{"kind":"kreassign-journal","version":1,"plan_id":"p","status":"running","partitions":[1]}',
        '{"kind":"kreassign-journal","version":1,"plan_id":"p","status":"running","partitions":[{"topic":"t"}]}',
        '{"kind":"kreassign-journal","version":1,"plan_id":"p","status":"x","partitions":[{"topic":"t",'
        '"partition":0,"original":5,"target":[1]}]}',
        '{"kind":"other","version":1}',
        "\udcff",
    ],
)
def test_a_corrupt_journal_is_a_command_error(tmp_path, content):
    path = tmp_path / "journal.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(CommandError, match="cannot be read"):
        Journal(path).load()


def test_a_directory_as_journal_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="cannot be read"):
        Journal(tmp_path).load()


def test_a_journal_under_a_regular_file_fails_before_anything_happens(tmp_path):
    blocker = tmp_path / "plan.json"
    blocker.write_text("{}")
    with pytest.raises(CommandError, match="is not a directory"):
        Journal(blocker / "journal.json").check_location()


@pytest.mark.parametrize(
    ("document", "reader"),
    [
        (
            '{"version":1,"partitions":[{"topic":"\\ud800x","partition":0,"replicas":[1],"log_dirs":["\\udc00"]}]}',
            "plan",
        ),
        ('{"version":1,"topics":[{"topic":"\\ud800x"}]}', "topics"),
    ],
)
def test_a_lone_surrogate_becomes_what_java_sends(document, reader):
    """Java's String.getBytes(UTF_8) sends "?"; the Python clients cannot encode it (librdkafka crashed)."""
    if reader == "topics":
        assert formats.parse_topics_to_move_json(document) == ["?x"]
    else:
        plan = formats.parse_reassignment_json(document)
        assert [tp.topic for tp, _ in plan.partitions] == ["?x"]
        assert list(plan.log_dirs.values()) == ["?"]


@pytest.mark.parametrize("call", ["describe_topics", "describe_configs", "incremental_alter_configs"])
def test_a_nul_in_a_topic_name_is_refused_before_librdkafka_cuts_it(call):
    """librdkafka would send "a\\0b" as "a" (another topic); Java's broker refuses the whole name."""
    from kreassign.cluster.kafka import KafkaCluster
    from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
    from kreassign.errors import ClusterError

    port = KafkaCluster(bootstrap_servers="127.0.0.1:1")
    resource = ConfigResource(ResourceType.TOPIC, "a\0b")
    args = {
        "describe_topics": (["a\0b"],),
        "describe_configs": ([resource],),
        "incremental_alter_configs": ({resource: [ConfigOp("x", OpType.DELETE, None)]},),
    }[call]
    with pytest.raises(ClusterError, match="InvalidTopicException"):
        getattr(port, call)(*args)
