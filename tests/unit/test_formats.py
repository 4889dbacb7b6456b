"""kreassign.formats against the Apache tool (Kafka 4.3.1 ReassignPartitionsCommand on Java 17).

Expected messages and outputs were produced by the real tool's methods (parsePartitionReassignmentData,
parseExecuteAssignmentArgs, parseTopicsData, parseGenerateAssignmentArgs, formatAsReassignmentJson) and
pasted here; the tool prints them as ``Error: <message>``. None comes from kreassign itself.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreassign import formats
from kreassign.errors import CommandError, KreassignError
from kreassign.javacompat.jackson_writer import node_to_string
from kreassign.model import ReassignmentPlan, TopicPartition, TopicPartitionReplica


@dataclass(frozen=True)
class Error:
    message: str


def src(line: int, column: int) -> str:
    return (
        f"[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {line}, column: {column}]"
    )


DATA_CASES = [
    pytest.param(
        "",
        Error("The input string shouldn't be empty\n at [Source: UNKNOWN; byte offset: #UNKNOWN]"),
        id="empty-file",
    ),
    pytest.param(
        "  \n",
        Error("Expected JSON object, received "),
        id="whitespace-file",
    ),
    pytest.param(
        "[]",
        Error("Expected JSON object, received []"),
        id="array-root",
    ),
    pytest.param(
        '"x"',
        Error('Expected JSON object, received "x"'),
        id="string-root",
    ),
    pytest.param(
        "null",
        Error("Expected JSON object, received null"),
        id="null-root",
    ),
    pytest.param(
        '{"version":1}',
        "[]\n{}",
        id="no-partitions-key",
    ),
    pytest.param(
        "{}",
        "[]\n{}",
        id="empty-object",
    ),
    pytest.param(
        '{"version":2,"partitions":[]}',
        Error("Not supported version field value 2"),
        id="version-2",
    ),
    pytest.param(
        '{"version":"1","partitions":[]}',
        Error('Expected `Integer` value, received "1"'),
        id="version-string",
    ),
    pytest.param(
        '{"version":1.0}',
        Error("Expected `Integer` value, received 1.0"),
        id="version-float",
    ),
    pytest.param(
        '{"version":null}',
        Error("Expected `Integer` value, received null"),
        id="version-null",
    ),
    pytest.param(
        '{"version":4294967297}',
        Error("Expected `Integer` value, received 4294967297"),
        id="version-long",
    ),
    pytest.param(
        '{"version":-1}',
        Error("Not supported version field value -1"),
        id="version-negative",
    ),
    pytest.param(
        '{"version":1,"partitions":null}',
        Error("Expected JSON array, received null"),
        id="partitions-null",
    ),
    pytest.param(
        '{"version":1,"partitions":{"a":[1,2.5]}}',
        Error('Expected JSON array, received {"a":[1,2.5]}'),
        id="partitions-object",
    ),
    pytest.param(
        '{"partitions":[1]}',
        Error("Expected JSON object, received 1"),
        id="partition-entry-number",
    ),
    pytest.param(
        '{"partitions":[["t",0]]}',
        Error('Expected JSON object, received ["t",0]'),
        id="partition-entry-array",
    ),
    pytest.param(
        '{"partitions":[{"partition":0,"replicas":[1]}]}',
        Error("No such field exists: `topic`"),
        id="missing-topic",
    ),
    pytest.param(
        '{"partitions":[{"topic":1,"partition":0,"replicas":[1]}]}',
        Error("Expected `String` value, received 1"),
        id="topic-number",
    ),
    pytest.param(
        '{"partitions":[{"topic":null,"partition":0,"replicas":[1]}]}',
        Error("Expected `String` value, received null"),
        id="topic-null",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","replicas":[1]}]}',
        Error("No such field exists: `partition`"),
        id="missing-partition",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":"0","replicas":[1]}]}',
        Error('Expected `Integer` value, received "0"'),
        id="partition-string",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0.0,"replicas":[1]}]}',
        Error("Expected `Integer` value, received 0.0"),
        id="partition-float",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":1e2,"replicas":[1]}]}',
        Error("Expected `Integer` value, received 100.0"),
        id="partition-exponent",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":2147483648,"replicas":[1]}]}',
        Error("Expected `Integer` value, received 2147483648"),
        id="partition-too-big",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":123456789012345678901234567890,"replicas":[1]}]}'),
        Error("Expected `Integer` value, received 123456789012345678901234567890"),
        id="partition-huge",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":true,"replicas":[1]}]}',
        Error("Expected `Integer` value, received true"),
        id="partition-bool",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0}]}',
        Error("No such field exists: `replicas`"),
        id="missing-replicas",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":1}]}',
        Error("Expected `JSON array` value, received 1"),
        id="replicas-number",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":null}]}',
        Error("Expected `JSON array` value, received null"),
        id="replicas-null",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1,"2"]}]}',
        Error('Expected `Integer` value, received "2"'),
        id="replica-string",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1,2.0]}]}',
        Error("Expected `Integer` value, received 2.0"),
        id="replica-float",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[[1]]}]}',
        Error("Expected `Integer` value, received [1]"),
        id="replica-nested-array",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1e23]}]}',
        Error("Expected `Integer` value, received 9.999999999999999E22"),
        id="replica-huge-double",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1e999]}]}',
        Error('Expected `Integer` value, received "Infinity"'),
        id="replica-overflow-infinity",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":null}]}'),
        Error("Expected `JSON array` value, received null"),
        id="log-dirs-null",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":"any"}]}'),
        Error('Expected `JSON array` value, received "any"'),
        id="log-dirs-string",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":[1]}]}'),
        Error("Expected `String` value, received 1"),
        id="log-dir-number",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}'),
        Error("Size of replicas list [1, 2] is different from size of log dirs list [any] for partition t-0"),
        id="log-dirs-shorter",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[],"log_dirs":["/a"]}]}'),
        Error("Size of replicas list [] is different from size of log dirs list [/a] for partition t-0"),
        id="log-dirs-longer",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["/d1","any"]}]}'),
        "[t-0=[1, 2]]\n{t-0-1=/d1}",
        id="log-dirs-mixed",
    ),
    pytest.param(
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1],'
            '"log_dirs":["/a"]},{"topic":"t","partition":0,"replicas":[1],'
            '"log_dirs":["/b"]}]}'
        ),
        "[t-0=[1], t-0=[1]]\n{t-0-1=/b}",
        id="log-dirs-later-wins",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"u","partition":-1,"replicas":["x"]}]}'),
        Error('Expected `Integer` value, received "x"'),
        id="second-entry-bad",
    ),
    pytest.param(
        ('{"version":1,"x":[[[]]],"partitions":[{"topic":"t","partition":0,"replicas":[3,1],"y":{}}]}'),
        "[t-0=[3, 1]]\n{}",
        id="extra-fields-ignored",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"a","topic":"b","partition":0,"replicas":[1]}]}'),
        "[b-0=[1]]\n{}",
        id="duplicate-key-last-wins",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1]}]} trailing',
        "[t-0=[1]]\n{}",
        id="trailing-garbage-ignored",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1,]}]}',
        Error(
            (
                "Unexpected character (']' (code 93)): expected a valid value (JSON "
                "String, Number, Array, Object or token 'null', 'true' or 'false')\n at "
            )
            + src(1, 57)
        ),
        id="syntax-error",
    ),
    pytest.param(
        '{"version":1,\n "partitions":[{"topic":"t" "partition":0}]}',
        Error(
            ("Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries\n at ") + src(2, 29)
        ),
        id="syntax-error-second-line",
    ),
    pytest.param(
        '\ufeff{"version":1}',
        Error(
            (
                "Unexpected character ('\ufeff' (code 65279 / 0xfeff)): expected a valid "
                "value (JSON String, Number, Array, Object or token 'null', 'true' or "
                "'false')\n at "
            )
            + src(1, 1)
        ),
        id="bom",
    ),
    pytest.param(
        '{"x":' + "[" * 1000 + "]" * 1000 + "}",
        Error(
            "Document nesting depth (1001) exceeds the maximum allowed (1000, from "
            "`StreamReadConstraints.getMaxNestingDepth()`)"
        ),
        id="nesting-too-deep",
    ),
    pytest.param(
        '{"version":' + "1" * 1001 + "}",
        Error(
            "Number value length (1001) exceeds the maximum allowed (1000, from "
            "`StreamReadConstraints.getMaxNumberLength()`)"
        ),
        id="number-too-long",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["a\\"b\\u0001é"]}]}'),
        '[t-0=[1]]\n{t-0-1=a"b\x01é}',
        id="topic-with-escapes-in-message",
    ),
]

EXEC_CASES = [
    pytest.param(
        '{"version":1,"partitions":[]}',
        Error("Partition reassignment list cannot be empty"),
        id="empty-list",
    ),
    pytest.param(
        '{"version":1}',
        Error("Partition reassignment list cannot be empty"),
        id="no-partitions",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}',
        Error("Partition replica list cannot be empty"),
        id="empty-replicas",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[]}]}'),
        Error("Partition replica list cannot be empty"),
        id="empty-replicas-checked-before-duplicates",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}'),
        Error("Partition reassignment contains duplicate topic partitions: t-0"),
        id="duplicate-partitions",
    ),
    pytest.param(
        (
            '{"partitions":[{"topic":"b","partition":1,"replicas":[1]},'
            '{"topic":"a","partition":2,"replicas":[1]},{"topic":"b","partition":1,'
            '"replicas":[1]},{"topic":"a","partition":2,"replicas":[1]},'
            '{"topic":"zz","partition":0,"replicas":[1]},{"topic":"zz",'
            '"partition":0,"replicas":[1]},{"topic":"a","partition":18,'
            '"replicas":[1]},{"topic":"a","partition":18,"replicas":[1]}]}'
        ),
        Error("Partition reassignment contains duplicate topic partitions: a-2,a-18,zz-0,b-1"),
        id="duplicate-partitions-hash-order",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]},{"topic":"t","partition":0,"replicas":[2]}]}'),
        Error("Partition reassignment contains duplicate topic partitions: t-0"),
        id="duplicate-partitions-before-duplicate-replicas",
    ),
    pytest.param(
        '{"partitions":[{"topic":"t","partition":0,"replicas":[1,2,1]}]}',
        Error("Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1"),
        id="duplicate-replicas",
    ),
    pytest.param(
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[33,17,1,33,17,1,'
            '2]},{"topic":"u","partition":3,"replicas":[4]},{"topic":"v",'
            '"partition":1,"replicas":[65,2,65,2]}]}'
        ),
        Error(
            "Partition replica lists may not contain duplicate entries: t-0 "
            "contains multiple entries for 33,17,1. v-1 contains multiple entries "
            "for 65,2"
        ),
        id="duplicate-replicas-several",
    ),
    pytest.param(
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[0,64,128,192,'
            "256,320,384,448,512,576,640,704,704,640,576,512,448,384,320,256,192,"
            "128,64,0]}]}"
        ),
        Error(
            "Partition replica lists may not contain duplicate entries: t-0 "
            "contains multiple entries for 512,704,640,576,448,384,320,256,192,128,"
            "64,0"
        ),
        id="duplicate-replicas-tree-bin",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","/d"]}]}'),
        "OK",
        id="ok",
    ),
]

TOPICS_CASES = [
    pytest.param(
        "",
        Error("The input string is not a valid JSON"),
        id="empty-file",
    ),
    pytest.param(
        " ",
        Error("Expected JSON object, received "),
        id="whitespace",
    ),
    pytest.param(
        '{"topics":[',
        Error("The input string is not a valid JSON"),
        id="syntax-error",
    ),
    pytest.param(
        "[" * 1001,
        Error("The input string is not a valid JSON"),
        id="nesting-too-deep",
    ),
    pytest.param(
        "[" + "1" * 1001 + "]",
        Error("The input string is not a valid JSON"),
        id="number-too-long",
    ),
    pytest.param(
        "[]",
        Error("Expected JSON object, received []"),
        id="array-root",
    ),
    pytest.param(
        "{}",
        "[]",
        id="no-topics",
    ),
    pytest.param(
        '{"version":2,"topics":[]}',
        Error("Not supported version field value 2"),
        id="version-2",
    ),
    pytest.param(
        '{"version":"1"}',
        Error('Expected `Integer` value, received "1"'),
        id="version-string",
    ),
    pytest.param(
        '{"topics":null}',
        Error("Expected JSON array, received null"),
        id="topics-null",
    ),
    pytest.param(
        '{"topics":{"topic":"a"}}',
        Error('Expected JSON array, received {"topic":"a"}'),
        id="topics-object",
    ),
    pytest.param(
        '{"topics":["a"]}',
        Error('Expected JSON object, received "a"'),
        id="topic-entry-string",
    ),
    pytest.param(
        '{"topics":[{"name":"a"}]}',
        Error("No such field exists: `topic`"),
        id="missing-topic",
    ),
    pytest.param(
        '{"topics":[{"topic":1}]}',
        Error("Expected `String` value, received 1"),
        id="topic-number",
    ),
    pytest.param(
        '{"version":1,"topics":[{"topic":"b"},{"topic":"a","x":1}]} junk',
        "[b, a]",
        id="ok",
    ),
]

FORMAT_CASES = [
    pytest.param(
        (
            '{"partitions":[{"topic":"b","partition":10,"replicas":[3,1],'
            '"log_dirs":["/x","any"]},{"topic":"b","partition":9,"replicas":[2]},'
            '{"topic":"a","partition":1,"replicas":[1,2]}]}'
        ),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":1,"replicas":[1,'
            '2],"log_dirs":["any","any"]},{"topic":"b","partition":9,'
            '"replicas":[2],"log_dirs":["any"]},{"topic":"b","partition":10,'
            '"replicas":[3,1],"log_dirs":["/x","any"]}]}'
        ),
        id="sorted-with-log-dirs",
    ),
    pytest.param(
        (
            '{"partitions":[{"topic":"t\\"\\\\/\\u0001\\u007fé\\u2028","partition":0,'
            '"replicas":[1],"log_dirs":["C:\\\\data\\tdir"]}]}'
        ),
        (
            '{"version":1,"partitions":[{"topic":"t\\"\\\\/\\u0001\x7fé\u2028","partition":0,'
            '"replicas":[1],"log_dirs":["C:\\\\data\\tdir"]}]}'
        ),
        id="escaping",
    ),
    pytest.param(
        (
            '{"partitions":[{"topic":"\uffff","partition":0,"replicas":[1]},'
            '{"topic":"𐀀","partition":0,"replicas":[1]},{"topic":"Z","partition":0,'
            '"replicas":[1]}]}'
        ),
        (
            '{"version":1,"partitions":[{"topic":"Z","partition":0,"replicas":[1],'
            '"log_dirs":["any"]},{"topic":"𐀀","partition":0,"replicas":[1],'
            '"log_dirs":["any"]},{"topic":"\uffff","partition":0,"replicas":[1],'
            '"log_dirs":["any"]}]}'
        ),
        id="utf16-order",
    ),
    pytest.param(
        '{"partitions":[]}',
        '{"version":1,"partitions":[]}',
        id="empty",
    ),
    pytest.param(
        ('{"partitions":[{"topic":"t","partition":-1,"replicas":[-5,2147483647]}]}'),
        (
            '{"version":1,"partitions":[{"topic":"t","partition":-1,"replicas":[-5,'
            '2147483647],"log_dirs":["any","any"]}]}'
        ),
        id="negative-partition",
    ),
]

GENERATE_CASES = [
    pytest.param(
        '{"topics":[{"topic":"a"}]}',
        "1,x",
        Error('For input string: "x"'),
        id="broker-letter",
    ),
    pytest.param(
        '{"topics":[]}',
        "",
        Error('For input string: ""'),
        id="broker-empty",
    ),
    pytest.param(
        '{"topics":[{"topic":"a"}]}',
        ",",
        "[]=[a]",
        id="broker-comma-only",
    ),
    pytest.param(
        '{"topics":[{"topic":"a"}]}',
        "1,2,,",
        "[1, 2]=[a]",
        id="broker-trailing-commas",
    ),
    pytest.param(
        '{"topics":[]}',
        "1,,2",
        Error('For input string: ""'),
        id="broker-empty-middle",
    ),
    pytest.param(
        '{"topics":[]}',
        " 1",
        Error('For input string: " 1"'),
        id="broker-leading-space",
    ),
    pytest.param(
        '{"topics":[]}',
        "1 ",
        Error('For input string: "1 "'),
        id="broker-trailing-space",
    ),
    pytest.param(
        '{"topics":[{"topic":"a"}]}',
        "+1,-2",
        "[1, -2]=[a]",
        id="broker-plus",
    ),
    pytest.param(
        '{"topics":[]}',
        "-",
        Error('For input string: "-"'),
        id="broker-sign-only",
    ),
    pytest.param(
        '{"topics":[]}',
        "2147483648",
        Error('For input string: "2147483648"'),
        id="broker-overflow",
    ),
    pytest.param(
        '{"topics":[{"topic":"a"}]}',
        "-2147483648",
        "[-2147483648]=[a]",
        id="broker-min",
    ),
    pytest.param(
        '{"topics":[{"topic":"a"}]}',
        "١٢",
        "[12]=[a]",
        id="broker-arabic-indic-digits",
    ),
    pytest.param(
        '{"topics":[{"topic":"a"}]}',
        "１",
        "[1]=[a]",
        id="broker-fullwidth-digit",
    ),
    pytest.param(
        '{"topics":[]}',
        "𝟏",
        Error('For input string: "𝟏"'),
        id="broker-astral-digit",
    ),
    pytest.param(
        '{"topics":[]}',
        "0x1",
        Error('For input string: "0x1"'),
        id="broker-hex",
    ),
    pytest.param(
        '{"topics":[]}',
        "1.0",
        Error('For input string: "1.0"'),
        id="broker-decimal",
    ),
    pytest.param(
        '{"topics":[]}',
        "65,2,65,2,17,17",
        Error("Broker list contains duplicate entries: [65, 17, 2]"),
        id="broker-duplicates-hash-order",
    ),
    pytest.param(
        "not json",
        "1,1",
        Error("Broker list contains duplicate entries: [1]"),
        id="broker-duplicates-before-topics-parsed",
    ),
    pytest.param(
        "not json",
        "1,2",
        Error("The input string is not a valid JSON"),
        id="topics-invalid-json",
    ),
    pytest.param(
        (
            '{"topics":[{"topic":"b"},{"topic":"a"},{"topic":"b"},{"topic":"a"},'
            '{"topic":"Aa"},{"topic":"BB"},{"topic":"BB"},{"topic":"Aa"}]}'
        ),
        "1",
        Error("List of topics to reassign contains duplicate entries: [BB, Aa, a, b]"),
        id="topics-duplicates",
    ),
    pytest.param(
        '{"topics":[{"topic":"a"},{"topic":"b"}]}',
        "3,1,2",
        "[3, 1, 2]=[a, b]",
        id="ok",
    ),
]


def _java_text(plan: ReassignmentPlan) -> str:
    """The plan as the oracle printed it: the entry list, then the log dirs in a TreeMap."""
    entries = ", ".join(f"{tp}=[{', '.join(map(str, replicas))}]" for tp, replicas in plan.partitions)
    dirs = sorted((str(replica), log_dir) for replica, log_dir in plan.log_dirs.items())
    return f"[{entries}]\n{{{', '.join(f'{replica}={log_dir}' for replica, log_dir in dirs)}}}"


def _outcome(action, *args):  # type: ignore[no-untyped-def]
    try:
        return action(*args)
    except KreassignError as error:
        assert isinstance(error, CommandError)  # printed as "Error: <message>"
        return Error(error.message)


@pytest.mark.parametrize(("text", "expected"), DATA_CASES)
def test_parse_reassignment_json(text: str, expected: str | Error) -> None:
    outcome = _outcome(formats.parse_reassignment_json, text)
    assert outcome == expected if isinstance(expected, Error) else _java_text(outcome) == expected


@pytest.mark.parametrize(("text", "expected"), EXEC_CASES)
def test_validate_execute_plan(text: str, expected: str | Error) -> None:
    outcome = _outcome(lambda t: formats.validate_execute_plan(formats.parse_reassignment_json(t)), text)
    assert outcome == expected if isinstance(expected, Error) else isinstance(outcome, dict)


@pytest.mark.parametrize(("text", "expected"), TOPICS_CASES)
def test_parse_topics_to_move_json(text: str, expected: str | Error) -> None:
    outcome = _outcome(formats.parse_topics_to_move_json, text)
    assert outcome == expected if isinstance(expected, Error) else f"[{', '.join(outcome)}]" == expected


@pytest.mark.parametrize(("topics_json", "broker_list", "expected"), GENERATE_CASES)
def test_parse_generate_assignment_args(topics_json: str, broker_list: str, expected: str | Error) -> None:
    outcome = _outcome(formats.parse_generate_assignment_args, topics_json, broker_list)
    if isinstance(expected, Error):
        assert outcome == expected
    else:
        brokers, topics = outcome
        assert f"[{', '.join(map(str, brokers))}]=[{', '.join(topics)}]" == expected


@pytest.mark.parametrize(("text", "expected"), FORMAT_CASES)
def test_format_reassignment_json(text: str, expected: str) -> None:
    plan = formats.parse_reassignment_json(text)
    assert formats.format_reassignment_json(dict(plan.partitions), plan.log_dirs) == expected


def test_format_defaults_log_dirs_to_any() -> None:
    assignments = {TopicPartition("b", 0): [2, 1], TopicPartition("a", 3): [1]}
    log_dirs = {TopicPartitionReplica("b", 0, 1): "/data"}
    assert formats.format_reassignment_json(assignments, log_dirs) == (
        '{"version":1,"partitions":[{"topic":"a","partition":3,"replicas":[1],"log_dirs":["any"]},'
        '{"topic":"b","partition":0,"replicas":[2,1],"log_dirs":["any","/data"]}]}'
    )


# ------------------------------------------------------------------------------------------ properties

TOPICS = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=8)
LOG_DIRS = st.sampled_from(["any", "/d1", "/d2", "C:\\data", 'we"ird\n'])


@st.composite
def reassignments(draw):  # type: ignore[no-untyped-def]
    assignments = draw(
        st.dictionaries(
            st.builds(TopicPartition, TOPICS, st.integers(min_value=-(2**31), max_value=2**31 - 1)),
            st.lists(st.integers(min_value=-(2**31), max_value=2**31 - 1), max_size=4, unique=True),
            max_size=6,
        )
    )
    log_dirs = {}
    for tp, replicas in assignments.items():
        for broker in replicas:
            log_dir = draw(LOG_DIRS)
            if log_dir != "any":
                log_dirs[TopicPartitionReplica(tp.topic, tp.partition, broker)] = log_dir
    return assignments, log_dirs


def jackson_reassignment_json(assignments, log_dirs) -> str:  # type: ignore[no-untyped-def]
    """The reference: the document as a tree, sorted by String.compareTo (UTF-16 units) and partition,
    written by the Jackson writer of kreassign.javacompat."""
    ordered = sorted(assignments.items(), key=lambda item: (item[0].topic.encode("utf-16-be"), item[0].partition))
    partitions = [
        {
            "topic": tp.topic,
            "partition": tp.partition,
            "replicas": list(replicas),
            "log_dirs": [log_dirs.get(TopicPartitionReplica(tp.topic, tp.partition, b), "any") for b in replicas],
        }
        for tp, replicas in ordered
    ]
    return node_to_string({"version": 1, "partitions": partitions})


@settings(max_examples=300, deadline=None)
@given(reassignments())
def test_formatted_reassignment_is_jacksons_text(case) -> None:  # type: ignore[no-untyped-def]
    """The fast writer gives Jackson's bytes for any topic name (quotes, backslashes, control characters,
    characters above U+FFFF next to U+E000..U+FFFF), with and without log dirs; the columns entry point
    (what --generate prints from) gives the same bytes as the mapping one."""
    assignments, log_dirs = case
    assert formats.format_reassignment_json(assignments, log_dirs) == jackson_reassignment_json(assignments, log_dirs)
    assert formats.format_reassignment_json(assignments, {}) == jackson_reassignment_json(assignments, {})
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in sorted(assignments, key=lambda tp: tp.partition):
        by_topic.setdefault(tp.topic, []).append(tp)
    columns = [
        (
            topic,
            [tp.partition for tp in tps],
            [assignments[tp] for tp in tps],
            [tuple(log_dirs.get(TopicPartitionReplica(topic, tp.partition, b)) for b in assignments[tp]) for tp in tps],
        )
        for topic, tps in reversed(by_topic.items())
    ]
    assert formats.format_topics_json(columns) == jackson_reassignment_json(assignments, log_dirs)
    assert formats.format_topics_json((t, p, r, None) for t, p, r, _ in columns) == jackson_reassignment_json(
        assignments, {}
    )


def test_topics_json_orders_topics_like_java() -> None:
    """U+10000 sorts before U+E000 in UTF-16 (a surrogate pair starts with 0xD800), after it by code point."""
    columns = [("\ue000", [0], [[1]], None), ("\U00010000", [0], [[2]], None), ('q"\\\x01', [1, 2], [[3], [4]], None)]
    assert formats.format_topics_json(columns) == (
        '{"version":1,"partitions":[{"topic":"q\\"\\\\\\u0001","partition":1,"replicas":[3],"log_dirs":["any"]},'
        '{"topic":"q\\"\\\\\\u0001","partition":2,"replicas":[4],"log_dirs":["any"]},'
        '{"topic":"\U00010000","partition":0,"replicas":[2],"log_dirs":["any"]},'
        '{"topic":"\ue000","partition":0,"replicas":[1],"log_dirs":["any"]}]}'
    )


@settings(max_examples=300, deadline=None)
@given(reassignments())
def test_formatted_reassignment_parses_back(case) -> None:  # type: ignore[no-untyped-def]
    assignments, log_dirs = case
    plan = formats.parse_reassignment_json(formats.format_reassignment_json(assignments, log_dirs))
    assert {tp: list(replicas) for tp, replicas in plan.partitions} == assignments
    assert plan.log_dirs == log_dirs


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789 -.eaxtopicsversionrelgdy_\\\n\x00é', max_size=80))
def test_parsers_only_raise_command_errors(text: str) -> None:
    for action in (formats.parse_reassignment_json, formats.parse_topics_to_move_json, formats.parse_broker_list):
        with contextlib.suppress(CommandError):
            action(text)
