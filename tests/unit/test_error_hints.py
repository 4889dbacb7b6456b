"""Errors an operator can act on: the Apache text stays the message, the hints (exception notes, printed on
stderr by the CLI) name what was wrong and what to do. No Kafka needed: the adapter is not connected."""

from __future__ import annotations

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.kafka import KafkaCluster


@pytest.fixture
def adapter():
    cluster = KafkaCluster("broker-a:9093,broker-b:9093", client_config=ClientConfig({"security.protocol": "SSL"}))
    yield cluster
    cluster.close()


def test_timeout_names_the_address_the_option_and_the_protocol(adapter):
    error = adapter.errors.timeout("listPartitionReassignments")
    assert error.message.endswith("Timed out waiting for a node assignment. Call: listPartitionReassignments")
    assert "broker-a:9093,broker-b:9093" in error.__notes__[0]
    assert "--bootstrap-server" in error.__notes__[1] and "SSL" in error.__notes__[1]


def test_ssl_failure_says_which_properties_to_check(adapter):
    from confluent_kafka import KafkaError

    error = adapter.errors.from_librdkafka(
        KafkaError(KafkaError._SSL, "SSL handshake failed: certificate verify failed"), "x"
    )
    assert error.message.endswith("SslAuthenticationException: SSL handshake failed")
    assert "certificate verify failed" in error.__notes__[0]
    assert "ssl.truststore" in error.__notes__[1] and "broker-a:9093" in error.__notes__[1]


def test_sasl_failure_says_which_properties_to_check(adapter):
    from confluent_kafka import KafkaError

    failure = KafkaError(KafkaError._AUTHENTICATION, "SASL authentication error: Authentication failed")
    error = adapter.errors.from_librdkafka(failure, "x")
    assert "SaslAuthenticationException" in error.message
    assert "sasl.jaas.config" in error.__notes__[0] and "sasl.mechanism" in error.__notes__[0]

    import kafka.errors

    error = adapter.errors.from_kafka_python(kafka.errors.SaslAuthenticationFailedError("denied: bad password"), "x")
    assert "SaslAuthenticationException" in error.message and "bad password" in error.message
    assert "sasl.jaas.config" in error.__notes__[0]


# ------------------------------------------------------------------ through the command line (issue 26 item 9)
def _cli(argv, monkeypatch):
    import io

    import kreassign.cli.app as app

    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(app, "_stderr", err.write)
    code = app.run([str(a) for a in argv], out=out.write, err=err.write)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def snapshot(tmp_path):
    """Brokers 1-3 without racks; topic 'orders' of 3 partitions, replication factor 2."""
    from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot

    partitions = tuple(SnapshotPartition(p, (1 + p % 3, 1 + (p + 1) % 3), ("/d", "/d"), 1000, 1) for p in range(3))
    brokers = tuple(SnapshotBroker(b, None, ("/d",)) for b in (1, 2, 3))
    path = tmp_path / "cluster.jsonl"
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(path))
    return path


@pytest.fixture
def topics_file(tmp_path):
    path = tmp_path / "topics.json"
    path.write_text('{"version":1,"topics":[{"topic":"orders"}]}')
    return path


@pytest.mark.parametrize(
    ("bootstrap", "note"),
    [
        ("127.0.0.1", "kreassign: --bootstrap-server entry '127.0.0.1' has no port: write host:port"),
        ("127.0.0.1:99999", "kreassign: --bootstrap-server entry '127.0.0.1:99999' has no valid port ('99999')"),
        ("nosuchhost.invalid:9092", "kreassign: No host of --bootstrap-server nosuchhost.invalid:9092 resolves: "),
    ],
    ids=["no-port", "bad-port", "unresolvable"],
)
def test_bootstrap_that_cannot_make_a_client_says_why(monkeypatch, bootstrap, note):
    code, out, err = _cli(["--bootstrap-server", bootstrap, "--list"], monkeypatch)
    assert (code, out) == (1, "Error: Failed to create new KafkaAdminClient\n")
    assert err.startswith(note) and err.count("\n") == 1, err


def test_bootstrap_controller_without_port_names_that_option(monkeypatch):
    code, out, err = _cli(["--bootstrap-controller", "localhost", "--list"], monkeypatch)
    assert (code, out) == (1, "Error: Failed to create new KafkaAdminClient\n")
    assert err.startswith("kreassign: --bootstrap-controller entry 'localhost' has no port"), err


def test_refused_port_fails_in_seconds_with_the_apache_line(tmp_path):
    """Nothing listens on the port: the Apache tool waits its 60 s deadline; kreassign probes the address and
    fails after 5 s of refused connections, with the same Error line. A real process, a real refused port."""
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kreassign", "--bootstrap-server", f"127.0.0.1:{port}", "--list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1
    assert done.stdout == (
        "Error: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. "
        "Call: listPartitionReassignments\n"
    )
    assert f"kreassign: Every address of the bootstrap servers 127.0.0.1:{port} refused the connection" in done.stderr
    assert elapsed < 20, elapsed


def test_listening_port_that_never_answers_is_not_refused():
    import socket

    from kreassign.cluster.bootstrap import refused_everywhere

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert not refused_everywhere([("127.0.0.1", listener.getsockname()[1])])
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        closed_port = closed.getsockname()[1]
        closed.close()
        assert refused_everywhere([("127.0.0.1", closed_port)])
        assert not refused_everywhere([("127.0.0.1", closed_port), ("127.0.0.1", listener.getsockname()[1])])


def test_malformed_plan_names_the_file_and_position(tmp_path, monkeypatch):
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,\n "partitions": [ {"topic":"a", }]}')
    code, out, err = _cli(
        ["--bootstrap-server", "127.0.0.1:1", "--execute", "--reassignment-json-file", plan], monkeypatch
    )
    assert code == 1 and out.startswith("Error: Unexpected character ('}' (code 125))")
    assert err == f"kreassign: {plan} (--reassignment-json-file) is not valid JSON: line 2, column 32.\n"


def test_malformed_topics_file_names_the_file_position_and_jackson_detail(tmp_path, snapshot, monkeypatch):
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,\n "topics": [ {"topic":"a", }]}')
    argv = ["--generate", "--cluster-snapshot-file", snapshot, "--topics-to-move-json-file", topics]
    code, out, err = _cli([*argv, "--broker-list", "1,2"], monkeypatch)
    assert (code, out) == (1, "Error: The input string is not a valid JSON\n")  # all the Apache tool says
    assert err == (
        f"kreassign: {topics} (--topics-to-move-json-file) is not valid JSON: line 2, column 28 (Unexpected "
        "character ('}' (code 125)): was expecting double-quote to start field name).\n"
    )


def test_wrong_shape_names_the_file(tmp_path, monkeypatch):
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"a","partition":0}]}')
    code, out, err = _cli(
        ["--bootstrap-server", "127.0.0.1:1", "--verify", "--reassignment-json-file", plan], monkeypatch
    )
    assert (code, out) == (1, "Error: No such field exists: `replicas`\n")
    assert err == f"kreassign: The error is in {plan} (--reassignment-json-file).\n"


def test_broker_list_with_spaces_says_so(snapshot, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot, "--topics-to-move-json-file", topics_file]
    code, out, err = _cli([*argv, "--broker-list", "1, 2"], monkeypatch)
    assert (code, out) == (1, 'Error: For input string: " 2"\n')
    assert err == "kreassign: --broker-list takes broker ids separated by commas, without spaces: '1,2'.\n"


def test_topics_file_given_as_plan_says_what_it_is(topics_file, monkeypatch):
    argv = ["--bootstrap-server", "127.0.0.1:1", "--execute", "--reassignment-json-file", topics_file]
    code, out, err = _cli(argv, monkeypatch)
    assert (code, out) == (1, "Error: Partition reassignment list cannot be empty\n")
    assert err.startswith(f'kreassign: {topics_file} looks like a topics-to-move file (it has "topics"')
    assert "--generate --topics-to-move-json-file" in err and err.count("\n") == 1


def test_throttle_under_1_kb_is_taken_with_a_warning(tmp_path, snapshot, monkeypatch):
    """The Apache tool takes any throttle >= 0 (and so does kreassign): the warning is on stderr only."""
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[3,1]}]}')
    argv = ["--execute", "--cluster-snapshot-file", snapshot, "--reassignment-json-file", plan, "--dry-run"]
    code, out, err = _cli([*argv, "--throttle", "100"], monkeypatch)
    assert code == 0, out + err
    assert "kreassign: warning: --throttle 100 is 100 bytes/s, under the 1 KB/s the help asks for" in err
    code, _, err = _cli([*argv, "--throttle", "1000"], monkeypatch)
    assert code == 0 and "warning" not in err


def test_unknown_broker_ids_are_named(snapshot, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot, "--topics-to-move-json-file", topics_file, "--seed", "1"]
    code, out, err = _cli([*argv, "--broker-list", "1,2,3,99"], monkeypatch)
    assert code == 0 and "Proposed partition reassignment configuration" in out
    assert err == (
        "kreassign: warning: --broker-list names broker(s) 99 that the cluster does not have; the proposal "
        "leaves them out (as the Apache tool does silently).\n"
    )
    code, out, err = _cli([*argv, "--broker-list", "1,99,98"], monkeypatch)
    assert code == 1 and out.startswith("Error: The target replication factor of 2 cannot be reached")
    assert err == (
        "kreassign: --broker-list names broker(s) 99, 98 that the cluster does not have (its brokers: 1, 2, 3); "
        "they were left out, as the Apache tool does.\n"
    )


@pytest.mark.parametrize(
    "extra",
    [["--output", "yaml"], ["--order", "smallest-first", "--max-partition-movements", "2"]],
    ids=["output", "order"],
)
def test_bad_values_of_kreassign_options_are_usage_errors_on_stderr(tmp_path, snapshot, monkeypatch, extra):
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[3,1]}]}')
    argv = ["--execute", "--cluster-snapshot-file", snapshot, "--reassignment-json-file", plan, "--dry-run"]
    code, out, err = _cli([*argv, *extra], monkeypatch)
    assert (code, out) == (1, "")
    assert err.endswith("\nRun with --help for the list of options.\n") and err.count("\n") == 2, err


def test_execute_on_a_snapshot_without_dry_run_is_refused_before_printing(tmp_path, snapshot):
    """Issue 26 item 10: it printed the whole current assignment (57 KB on a large snapshot), then refused."""
    import subprocess
    import sys

    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[3,1]}]}')
    argv = ["--execute", "--cluster-snapshot-file", str(snapshot), "--reassignment-json-file", str(plan)]
    done = subprocess.run([sys.executable, "-m", "kreassign", *argv], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "--execute with --cluster-snapshot-file needs --dry-run: a snapshot is read-only (to move partitions, use "
        "--bootstrap-server)\nRun with --help for the list of options.\n"
    )
    done = subprocess.run([sys.executable, "-m", "kreassign", *argv, "--dry-run"], capture_output=True, timeout=60)
    assert done.returncode == 0, done


def test_unknown_broker_ids_are_named_with_the_balanced_strategy(snapshot, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot, "--topics-to-move-json-file", topics_file]
    argv += ["--strategy", "balanced"]
    code, out, err = _cli([*argv, "--broker-list", "1,2,3,99"], monkeypatch)
    assert code == 0 and "Proposed partition reassignment configuration" in out
    assert "kreassign: warning: --broker-list names broker(s) 99 that the cluster does not have" in err
    code, out, err = _cli([*argv, "--broker-list", "1,99"], monkeypatch)
    assert code == 1 and out.startswith("Error: The target replication factor of 2 cannot be reached")
    assert err == (
        "kreassign: --broker-list names broker(s) 99 that the cluster does not have (its brokers: 1, 2, 3); "
        "they were left out, as the Apache tool does.\n"
    )


AUTO = ["--throttle", "auto", "--max-partition-movements", "2"]  # a batched run with --throttle auto

BAD_VALUES = [
    # (id, action, extra argv, the usage error's first line)
    (
        "partitions-abc",
        "execute",
        ["--max-partition-movements", "abc"],
        "--max-partition-movements takes a whole number, not 'abc'",
    ),
    (
        "partitions-0",
        "execute",
        ["--max-partition-movements", "0"],
        "--max-partition-movements must be at least 1, not 0",
    ),
    (
        "replicas-1.5",
        "execute",
        ["--max-replica-movements", "1.5"],
        "--max-replica-movements takes a whole number, not '1.5'",
    ),
    ("leaders-neg", "execute", ["--max-leader-movements=-2"], "--max-leader-movements must be at least 1, not -2"),
    ("brokers-x", "execute", ["--max-broker-movements", "x"], "--max-broker-movements takes a whole number, not 'x'"),
    ("poll", "execute", ["--poll-interval-ms", "fast"], "--poll-interval-ms takes a whole number, not 'fast'"),
    ("stall", "execute", ["--stall-timeout-ms", "0"], "--stall-timeout-ms must be at least 1, not 0"),
    (
        "order",
        "execute",
        ["--order", "random"],
        "Invalid value 'random' for --order: expected one of plan, small-first, large-first",
    ),
    ("output", "execute", ["--output", "yaml"], "--output must be text or json, not 'yaml'"),
    ("seed", "generate", ["--seed", "x"], "--seed takes a whole number, not 'x'"),
    (
        "strategy",
        "generate",
        ["--strategy", "best"],
        "Invalid value 'best' for --strategy: expected one of apache, balanced, leaders",
    ),
    (
        "engine",
        "generate",
        ["--strategy", "balanced", "--engine", "gpu"],
        "Invalid value 'gpu' for --engine: expected one of auto, local, spark",
    ),
    (
        "rf",
        "generate",
        ["--strategy", "balanced", "--replication-factor", "two"],
        "--replication-factor takes a whole number, not 'two'",
    ),
    ("budget", "generate", ["--strategy", "balanced", "--move-budget", "lots"], "Invalid --move-budget 'lots'"),
    ("tolerance", "generate", ["--strategy", "balanced", "--bytes-tolerance", "x"], "Invalid --bytes-tolerance 'x'"),
    ("disk", "generate", ["--strategy", "balanced", "--max-disk-usage", "2"], "Invalid --max-disk-usage '2'"),
    # --throttle auto (issue 35): batched runs only, with each broker's capacity
    ("auto-apache", "execute", ["--throttle", "auto"], "--throttle auto is for a batched run (--max-partition-mo"),
    (
        "auto-no-capacity",
        "execute",
        AUTO,
        "--throttle auto needs each broker's network capacity: give --broker-capacity BYTES/S or",
    ),
    (
        "auto-both-capacities",
        "execute",
        [*AUTO, "--broker-capacity", "1", "--broker-capacity-file", "c"],
        "--throttle auto needs each broker's network capacity",
    ),
    ("capacity-no-auto", "execute", ["--broker-capacity", "1000"], "--broker-capacity is for --throttle auto"),
    (
        "utilisation-no-auto",
        "execute",
        ["--throttle", "1000", "--max-utilisation", "0.5"],
        "--max-utilisation is for --throttle auto",
    ),
    (
        "capacity-0",
        "execute",
        [*AUTO, "--broker-capacity", "0"],
        "--broker-capacity must be at least 1, not 0",
    ),
    (
        "utilisation-1.5",
        "execute",
        [*AUTO, "--broker-capacity", "1", "--max-utilisation", "1.5"],
        "--max-utilisation must be a share of the capacity, 0 < F <= 1, not '1.5'",
    ),
]


@pytest.mark.parametrize(("action", "extra", "message"), [c[1:] for c in BAD_VALUES], ids=[c[0] for c in BAD_VALUES])
def test_a_bad_value_of_a_kreassign_option_wins_over_a_missing_file_and_the_cluster(tmp_path, action, extra, message):
    """Issue 33: `--max-partition-movements abc` printed `Error: Cannot parse argument ...` on stdout, and only
    after the plan file was read (a missing file won). Through a real pipe, against an address where nothing
    listens: the usage error comes first, on stderr, nothing on stdout, exit 1."""
    import subprocess
    import sys

    missing = str(tmp_path / "missing.json")
    files = (
        ["--reassignment-json-file", missing]
        if action == "execute"
        else ["--topics-to-move-json-file", missing, "--broker-list", "1,2"]
    )
    argv = ["--bootstrap-server", "127.0.0.1:1", f"--{action}", *files, *extra]
    done = subprocess.run(
        [sys.executable, "-m", "kreassign", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, ""), done
    assert done.stderr.startswith(message), done.stderr
    assert done.stderr.endswith("\nRun with --help for the list of options.\n") and "Traceback" not in done.stderr
