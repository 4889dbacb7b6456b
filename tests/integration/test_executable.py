"""The self-contained executable (issue 41) as an operator runs it: in ``env -i`` (a PATH with no Python on it,
no venv, a fresh HOME), against the real local cluster, with stdout and exit codes equal to the installed
package's on the same state: --version, --help, --list, --generate, the Apache --execute and --verify, and a
batched run with --progress and --cancel from a second shell.

The executable is built once per change of its inputs (packaging/build_executable.py --cache, the build
``scripts/build-executable`` makes; kept in $KREASSIGN_BUILD_CACHE, default ~/.cache/kreassign/executable)
and installed as an operator does: ``kafka-reassign-partitions`` in a folder of its own, ``kreassign`` a link to it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.devcluster.topics import create_topic
from kreassign.model import TopicPartition
from kreassign.spark import EXECUTABLE_MARKER
from tests.integration.differential import wait_until

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
#: What the executable's launcher runs on the host (POSIX sh and a few base tools): the whole PATH of its runs.
HOST_TOOLS = ("sh", "readlink", "tail", "gzip", "tar", "mktemp", "mv", "rm", "mkdir", "id", "getconf", "ls")
#: The installed package: this environment's console script.
PACKAGE = Path(sys.executable).parent / "kafka-reassign-partitions"


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float


@pytest.fixture(scope="session")
def built_executable() -> Path:
    """The executable of this checkout, built now unless the build cache has it already."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build_executable.py"), "--cache"],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    print(f"executable ready in {time.monotonic() - started:.1f} s: {proc.stdout.strip()}")
    return Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def host(built_executable, tmp_path_factory) -> dict[str, Path]:
    """A host as the executable sees it: its folder (the executable and the kreassign link), a PATH folder of
    base tools with no Python, a fresh HOME."""
    root = tmp_path_factory.mktemp("host")
    (root / "bin").mkdir()
    (root / "tools").mkdir()
    (root / "home").mkdir()
    shutil.copy2(built_executable, root / "bin" / "kafka-reassign-partitions")
    (root / "bin" / "kreassign").symlink_to("kafka-reassign-partitions")
    for tool in HOST_TOOLS:
        (root / "tools" / tool).symlink_to(shutil.which(tool))
    path = f"{root / 'bin'}:{root / 'tools'}"
    assert not any(shutil.which(name, path=path) for name in ("python", "python3", "pip", "pip3"))
    return {"bin": root / "bin", "tools": root / "tools", "path": Path(path), "home": root / "home"}


def run_executable(host, args: list[str], name: str = "kafka-reassign-partitions", timeout: float = 180) -> Outcome:
    env = {"HOME": str(host["home"]), "PATH": str(host["path"])}  # env -i HOME=... PATH=...
    return _run([str(host["bin"] / name), *args], env, timeout)


def run_package(home: Path, args: list[str], name: str = "kafka-reassign-partitions", timeout: float = 180) -> Outcome:
    env = {"HOME": str(home), "PATH": f"{PACKAGE.parent}:/usr/bin:/bin"}
    return _run([str(PACKAGE.parent / name), *args], env, timeout)


def _run(argv: list[str], env: dict[str, str], timeout: float) -> Outcome:
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    return Outcome(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def same(ours: Outcome, theirs: Outcome) -> None:
    assert (ours.code, ours.stdout) == (theirs.code, theirs.stdout), f"{ours.stderr}\n---\n{theirs.stderr}"


def test_first_run_unpacks_once_then_version_and_help_equal_the_package(host, tmp_path):
    first = run_executable(host, ["--version"])
    unpacked = sorted((host["home"] / ".cache" / "kreassign").iterdir())
    assert len(unpacked) == 1 and (unpacked[0] / EXECUTABLE_MARKER).is_file(), unpacked
    again = run_executable(host, ["--version"])
    package = run_package(tmp_path, ["--version"])
    same(first, package)
    same(again, package)
    assert first.stderr == again.stderr == ""
    for name in ("kafka-reassign-partitions", "kreassign"):
        same(run_executable(host, ["--help"], name), run_package(tmp_path, ["--help"], name))
    assert run_executable(host, ["--help"], "kreassign").stdout.startswith("Usage: kreassign ")
    # Kerberos, loaded by name with ctypes as the cluster code does, is the carried copy, not the host's
    probe = (
        "import ctypes; ctypes.CDLL('libgssapi_krb5.so.2'); "
        "print(*sorted({line.split()[-1] for line in open('/proc/self/maps') if 'libgssapi_krb5' in line}))"
    )
    env = {"HOME": str(host["home"]), "PATH": str(host["path"])}
    loaded = _run([str(unpacked[0] / "bin" / "python3"), "-I", "-c", probe], env, 60)
    assert loaded.stdout.strip() == str(unpacked[0] / "lib" / "libgssapi_krb5.so.2"), loaded
    # the man page and the completions it carries are the package's (the wheel's data files)
    for carried, source in (
        ("share/man/man1/kreassign.1", "man/kreassign.1"),
        ("share/bash-completion/completions/kreassign.bash", "completions/kreassign.bash"),
        ("share/zsh/site-functions/_kreassign", "completions/_kreassign"),
        ("share/fish/vendor_completions.d/kreassign.fish", "completions/kreassign.fish"),
    ):
        assert (unpacked[0] / carried).read_bytes() == (ROOT / source).read_bytes(), carried
    print(f"first run (unpacks) {first.seconds:.2f} s, then {again.seconds:.3f} s; package {package.seconds:.3f} s")


def test_a_host_with_an_older_glibc_is_told_so_before_anything_is_unpacked(host, built_executable, tmp_path):
    """The first run asks ``getconf GNU_LIBC_VERSION`` (here a stand-in that says 2.31, Debian 11's)."""
    tools = tmp_path / "tools"
    shutil.copytree(host["tools"], tools, symlinks=True)
    (tools / "getconf").unlink()  # a link to the host's: write a file of its own, not through the link
    (tools / "getconf").write_text('#!/bin/sh\necho "glibc 2.31"\n')
    (tools / "getconf").chmod(0o755)
    env = {"HOME": str(tmp_path / "home"), "PATH": f"{host['bin']}:{tools}"}
    out = _run([str(host["bin"] / "kafka-reassign-partitions"), "--version"], env, 60)
    floor = json.loads((built_executable.parent / "BUILD-INFO.json").read_text())
    assert (out.code, out.stdout) == (1, "")
    assert out.stderr.startswith(
        f"kafka-reassign-partitions: this build needs glibc {floor['glibc']} or newer; this host has 2.31.\n"
    ), out.stderr
    assert not (tmp_path / "home" / ".cache").exists()


def test_engine_spark_says_in_one_line_how_to_get_it(host, kafka_cluster, tmp_path):
    create_topic(kafka_cluster.bootstrap_servers, "exe-spark", [[1, 2]])
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"exe-spark"}]}')
    args = ["--bootstrap-server", kafka_cluster.bootstrap_servers, "--generate", "--strategy", "balanced"]
    args += ["--broker-list", "1,2,3", "--engine", "spark", "--topics-to-move-json-file", str(topics)]
    out = run_executable(host, args)
    assert out.code == 1
    assert re.fullmatch(
        r"Error: --engine spark needs pyspark, pandas and pyarrow, which the self-contained executable does not "
        r"carry: pip install 'kreassign\[spark\]' and run that kreassign \((pandas|pyarrow|pyspark) is missing\)\n",
        out.stdout,
    ), out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def plan(topic: str, layout: list[list[int]]) -> str:
    return json.dumps(
        {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in enumerate(layout)]}
    )


def settled(port: KafkaCluster, topic: str, partitions: int) -> bool:
    return not port.list_reassignments([TopicPartition(topic, p) for p in range(partitions)])


def test_generate_execute_verify_equal_the_package(host, kafka_cluster, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = "exe-apache"
    source, target = [[1, 2], [2, 3], [3, 1]], [[2, 3], [3, 1], [1, 2]]
    create_topic(bootstrap, topic, source, messages=30)
    port = KafkaCluster(bootstrap_servers=bootstrap)
    home = tmp_path / "package-home"
    home.mkdir()
    b = ["--bootstrap-server", bootstrap]
    (tmp_path / "topics.json").write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    (tmp_path / "plan.json").write_text(plan(topic, target))
    (tmp_path / "back.json").write_text(plan(topic, source))
    try:
        # (--list is compared while a reassignment runs, in the batched test)
        generate = [*b, "--generate", "--topics-to-move-json-file", str(tmp_path / "topics.json")]
        generate += ["--broker-list", "1,2,3"]
        seeded = run_package(home, [*generate, "--seed", "7"])
        same(run_executable(host, [*generate, "--seed", "7"]), seeded)
        apache_form = run_executable(host, generate)  # Apache's placement starts at a random broker
        assert apache_form.code == 0 and apache_form.stdout.split("Proposed")[0] == seeded.stdout.split("Proposed")[0]
        execute = [*b, "--execute", "--reassignment-json-file", str(tmp_path / "plan.json")]
        verify = [*b, "--verify", "--reassignment-json-file", str(tmp_path / "plan.json")]
        exe_execute = run_executable(host, execute)
        assert wait_until(lambda: settled(port, topic, 3), timeout=60, interval=0.2)
        exe_verify, pkg_verify = run_executable(host, verify), run_package(home, verify)  # the same state
        same(exe_verify, pkg_verify)
        # back to the source (no throttle was set: nothing to clear), and the package's --execute from there
        run_package(home, [*b, "--execute", "--reassignment-json-file", str(tmp_path / "back.json")])
        assert wait_until(lambda: settled(port, topic, 3), timeout=60, interval=0.2)
        same(exe_execute, run_package(home, execute))
        assert wait_until(lambda: settled(port, topic, 3), timeout=60, interval=0.2)
        assert "Successfully started partition reassignments for exe-apache-0" in exe_execute.stdout
        assert exe_verify.stdout.count("is completed.") == 3
    finally:
        port.close()


def masked(text: str, home: Path) -> str:
    """What may differ between two runs of the same batched plan: where the state folder is, process ids, how
    much was copied before the cancel and in how long, and (while a copy runs) the bytes, rates and times of
    --progress."""
    sized = re.sub(r"\b\d+(\.\d+)? (B|KiB|MiB|GiB|TiB)\b", "SIZE", text.replace(str(home), "HOME"))
    copied = re.sub(r"SIZE copied \(SIZE of it by the reverted steps, discarded\)", "SIZE copied", sized)
    return re.sub(r"\d+", "N", copied)


def progress_shape(text: str, home: Path) -> str:
    """A --progress table while a copy runs, less what the moment decides: the rate and the ETA columns (a
    fetch of the new replica lands between two calls or not), and the numbers (masked)."""
    lines = []
    for line in text.splitlines():
        fields = re.split(r"\s{2,}", line.strip())
        if len(fields) == 7:  # Topic, Partition, Broker, Status, Bytes behind | Rate (B/s), ETA
            line = " | ".join(fields[:5]) if not set(line) <= {"-", " "} else "---"
        lines.append(line)
    return masked("\n".join(lines), home)


class Caller:
    """One tool in one operator's shells: ``caller(args)`` runs it and waits; ``caller.argv`` and ``caller.env``
    start it in the background."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.argv, self.env = argv, env
        self.home = Path(env["HOME"])

    def __call__(self, args: list[str]) -> Outcome:
        return _run([*self.argv, *args], self.env, 180)


def mid_step(port: KafkaCluster, topic: str) -> bool:
    """The run's first step copies under the run's throttle."""
    if settled(port, topic, 1):
        return False
    described = port.describe_configs([ConfigResource(ResourceType.BROKER, "3")])
    return any("follower.replication.throttled.rate" in values for values in described.values())


def batched_run(runner: Caller, other: Caller, port: KafkaCluster, plan_file: Path, topic: str) -> dict:
    """``runner --execute`` batched and throttled, left running; while it copies, ``--progress`` of both tools
    one after the other (the same state); then from a second shell the runner's Apache-form ``--cancel``, and
    ``--progress`` once the run has stopped. What each printed, by name."""
    args = ["--bootstrap-server", port.bootstrap_servers, "--reassignment-json-file", str(plan_file)]
    seen: dict[str, Outcome] = {}
    with (plan_file.parent / f"run-{runner.home.name}.out").open("w+") as out:
        run = subprocess.Popen(
            [*runner.argv, *args, "--execute", "--max-replica-movements", "1", "--throttle", "10000"],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            env=runner.env,
        )
        try:
            assert wait_until(lambda: mid_step(port, topic) or run.poll() is not None, timeout=90, interval=0.2)
            assert run.poll() is None, run.stderr.read()
            seen["progress"], seen["other's progress"] = runner([*args, "--progress"]), other([*args, "--progress"])
            listed = ["--bootstrap-server", port.bootstrap_servers, "--list"]
            seen["list"], seen["other's list"] = runner(listed), other(listed)
            seen["cancel"] = runner([*args, "--cancel"])
            code = run.wait(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
        out.seek(0)
        seen["run"] = Outcome(code, out.read(), run.stderr.read(), 0)
    seen["progress after"] = runner([*args, "--progress"])
    return seen


def test_batched_run_progress_and_cancel_from_a_second_shell_equal_the_package(host, kafka_cluster, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = "exe-batched"
    # 8 MB: a follower fetches 1 MB at a time (replica.fetch.max.bytes) whatever the throttle, one fetch about
    # every 10 s (the quota's window), so the step copies for about 80 s: in flight until the cancel, under load too
    create_topic(bootstrap, topic, [[1, 2]], messages=8000, size=1000)
    plan_file = tmp_path / "batched.json"
    plan_file.write_text(plan(topic, [[3, 2]]))
    (tmp_path / "package-home").mkdir()
    executable = Caller(
        [str(host["bin"] / "kafka-reassign-partitions")], {"HOME": str(host["home"]), "PATH": str(host["path"])}
    )
    package = Caller(
        [str(PACKAGE)], {"HOME": str(tmp_path / "package-home"), "PATH": f"{PACKAGE.parent}:/usr/bin:/bin"}
    )
    port = KafkaCluster(bootstrap_servers=bootstrap)
    try:
        ours = batched_run(executable, package, port, plan_file, topic)
        assert wait_until(lambda: settled(port, topic, 1), timeout=60, interval=0.2)
        # the cancel put the step in flight back: the package's run starts from the same state
        assert [list(p.replicas) for p in port.describe_topics([topic])[topic]] == [[1, 2]]
        theirs = batched_run(package, executable, port, plan_file, topic)
    finally:
        port.close()

    def shown(outcome: Outcome, home: Path) -> tuple[int, str]:
        return outcome.code, masked(outcome.stdout, home)

    for name in ("progress", "list", "cancel", "run", "progress after"):
        one, other = ours[name], theirs[name]
        if name == "progress":
            one = Outcome(one.code, progress_shape(one.stdout, executable.home), one.stderr, 0)
            other = Outcome(other.code, progress_shape(other.stdout, package.home), other.stderr, 0)
        assert shown(one, executable.home) == shown(other, package.home), (
            f"{name}\n{one.stdout}{one.stderr}\n--- package ---\n{other.stdout}{other.stderr}"
        )
    for seen, (runner, other) in ((ours, (executable, package)), (theirs, (package, executable))):
        assert (seen["progress"].code, progress_shape(seen["progress"].stdout, runner.home)) == (
            seen["other's progress"].code,
            progress_shape(seen["other's progress"].stdout, other.home),
        )
        same(seen["list"], seen["other's list"])  # a reassignment in flight: its replicas, no number masked
        assert f"Current partition reassignments:\n{topic}-0: replicas: " in seen["list"].stdout
    assert (ours["run"].code, ours["cancel"].code) == (4, 0)
    assert ours["cancel"].stdout.startswith(f"Successfully cancelled partition reassignment for: {topic}-0\n")
    assert "Batched reassignment cancelled" in ours["run"].stdout
    assert " behind" in ours["progress"].stdout
