"""The self-contained executable (issue 41) as an operator runs it: in ``env -i`` (a PATH with no Python on it,
no venv, a fresh HOME), against the real local cluster, with stdout and exit codes equal to the installed
package's on the same state: --version, --help, --list, --generate, the Apache --execute and --verify, and a
batched run with --progress and --cancel from a second shell.

The executable is built once per change of its inputs (packaging/build_executable.py --cache, the build
``scripts/build-executable`` makes; kept in $KREASSIGN_BUILD_CACHE, default ~/.cache/kreassign/executable)
and installed as an operator does: ``kafka-reassign-partitions`` in a folder of its own, ``kreassign`` a link to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.devcluster.topics import create_topic
from kreassign.model import TopicPartition
from kreassign.spark import EXECUTABLE_MARKER
from tests.integration.differential import wait_until
from tests.unit.test_sasl_logins import _StsStandIn

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
    """The executable of this checkout, built now unless the build cache has it already; or the one
    $KREASSIGN_EXECUTABLE names (a release's: ``scripts/release --portable`` leaves it in dist/)."""
    if os.environ.get("KREASSIGN_EXECUTABLE"):
        return Path(os.environ["KREASSIGN_EXECUTABLE"]).resolve()
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


def glibc_floor(executable: Path) -> str:
    """The glibc the executable needs, as its launcher's header states it (the build's glibc_floor)."""
    with executable.open("rb") as handle:
        header = handle.read(8192).decode()
    return re.search(r"one self-contained file for Linux, glibc ([0-9.]+) or newer", header).group(1)


def test_a_host_with_an_older_glibc_is_told_so_before_anything_is_unpacked(host, built_executable, tmp_path):
    """The first run asks ``getconf GNU_LIBC_VERSION`` (here a stand-in that says one minor release less than
    the build's floor: 2.34 for a build on glibc 2.35, 2.30 for a bullseye one)."""
    floor = glibc_floor(built_executable)
    older = f"{floor.split('.')[0]}.{int(floor.split('.')[1]) - 1}"
    tools = tmp_path / "tools"
    shutil.copytree(host["tools"], tools, symlinks=True)
    (tools / "getconf").unlink()  # a link to the host's: write a file of its own, not through the link
    (tools / "getconf").write_text(f'#!/bin/sh\necho "glibc {older}"\n')
    (tools / "getconf").chmod(0o755)
    env = {"HOME": str(tmp_path / "home"), "PATH": f"{host['bin']}:{tools}"}
    out = _run([str(host["bin"] / "kafka-reassign-partitions"), "--version"], env, 60)
    assert (out.code, out.stdout) == (1, "")
    assert out.stderr == (
        f"kafka-reassign-partitions: this build needs glibc {floor} or newer; this host has {older}.\n"
        "kafka-reassign-partitions: use the Python package there (pip install kreassign, Python 3.11+).\n"
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


class _AwsStandIn(_StsStandIn):
    """AWS on 127.0.0.1 for the credential providers that call it: STS (AssumeRole, the form posts of the
    unit tests' stand-in), SSO (GET /federation/credentials: GetRoleCredentials) and SSO-OIDC (POST /token:
    CreateToken, an sso-session's refresh)."""

    def _json(self, answer: dict) -> None:
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        _AwsStandIn.calls.append({"Action": "GetRoleCredentials", "auth": self.headers.get("x-amz-sso_bearer_token")})
        expiry = int((time.time() + 3600) * 1000)
        keys = {"accessKeyId": "ASIASSOEXAMPLE000001", "secretAccessKey": "ssoSecret01", "sessionToken": "sso01"}
        self._json({"roleCredentials": {**keys, "expiration": expiry}})

    def do_POST(self) -> None:
        if self.path != "/token":
            return super().do_POST()
        self.rfile.read(int(self.headers["Content-Length"]))
        _AwsStandIn.calls.append({"Action": "CreateToken"})
        self._json({"accessToken": "refreshed-sso-token", "expiresIn": 3600, "tokenType": "Bearer"})


#: Run by the executable's own interpreter: each login of the AWS unit tests, as --command-config gives it, to a
#: token (its action, region and key); the AWS configuration is the fresh HOME's ~/.aws.
AWS_TOKENS = """
import json, sys
from kreassign.cluster.aws_iam import describe_token
from kreassign.cluster.client_config import ClientConfig
seen = {}
for name, options in json.loads(sys.argv[1]).items():
    jaas = " ".join(f'{key}="{value}"' for key, value in options.items())
    config = ClientConfig({"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
        "sasl.jaas.config": f"software.amazon.msk.auth.iam.IAMLoginModule required {jaas};",
        "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler"})
    config.log_in("b-1.demo.abc123.c2.kafka.eu-west-3.amazonaws.com:9098")
    described = describe_token(config.sasl.token().value)
    seen[name] = [described[key] for key in ("action", "region", "service", "expires_s", "access_key")]
print(json.dumps(seen))
"""


def test_aws_msk_iam_tokens_from_a_profile_a_role_and_sso_with_the_carried_aws_data(host, tmp_path):
    """The executable carries the aws extra (AWS's signer, boto3, botocore) with botocore's data of STS, SSO
    and SSO-OIDC only: each credential provider that calls AWS makes its token through it, against a local AWS
    stand-in, in env -i with a fresh HOME's ~/.aws (AWS_ENDPOINT_URL_* points the calls at the stand-in)."""
    run_executable(host, ["--version"])  # unpacked (the first test did it, unless this one runs alone)
    (bundle,) = (host["home"] / ".cache" / "kreassign").iterdir()
    data = bundle / "lib" / "python3.11" / "site-packages" / "botocore" / "data"
    assert sorted(p.name for p in data.iterdir() if p.is_dir()) == ["signin", "sso", "sso-oidc", "sts"]
    aws = tmp_path / "home" / ".aws"
    (aws / "sso" / "cache").mkdir(parents=True)
    (aws / "credentials").write_text(
        "[ops]\naws_access_key_id = AKIAOPSEXAMPLE000001\naws_secret_access_key = opsSecretKeyExample0001\n"
    )
    (aws / "config").write_text(
        "[profile ops]\nregion = us-west-2\n"
        "[profile sso]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = ops\n"
        "[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n"
    )
    soon = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 300))  # within botocore's refresh window
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
    (aws / "sso" / "cache" / f"{hashlib.sha1(b'corp').hexdigest()}.json").write_text(
        json.dumps(
            {
                "startUrl": "https://corp.awsapps.com/start",
                "region": "eu-west-1",
                "accessToken": "cached-sso-token",
                "expiresAt": soon,
                "clientId": "client",
                "clientSecret": "secret",
                "registrationExpiresAt": later,
                "refreshToken": "refresh",
            }
        )
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AwsStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stand_in = f"http://127.0.0.1:{server.server_address[1]}"
    env = {"HOME": str(tmp_path / "home"), "PATH": str(host["path"]), "AWS_EC2_METADATA_DISABLED": "true"}
    env |= {f"AWS_ENDPOINT_URL_{service}": stand_in for service in ("STS", "SSO", "SSO_OIDC")}
    logins = {
        "profile": {"awsProfileName": "ops"},
        "role": {
            "awsProfileName": "ops",
            "awsRoleArn": "arn:aws:iam::123456789012:role/ops",
            "awsStsRegion": "eu-west-3",
        },
        "sso": {"awsProfileName": "sso"},
    }
    _AwsStandIn.calls.clear()
    try:
        out = _run([str(bundle / "bin" / "python3"), "-I", "-c", AWS_TOKENS, json.dumps(logins)], env, 120)
    finally:
        server.shutdown()
    assert out.code == 0 and "kreassign[aws]" not in out.stdout + out.stderr, out.stderr
    signed = ["kafka-cluster:Connect", "eu-west-3", "kafka-cluster", 900]
    assert json.loads(out.stdout) == {
        "profile": [*signed, "AKIAOPSEXAMPLE000001"],
        "role": [*signed, "ASIAROLEEXAMPLE00001"],
        "sso": [*signed, "ASIASSOEXAMPLE000001"],
    }
    assert [call["Action"] for call in _AwsStandIn.calls] == ["AssumeRole", "CreateToken", "GetRoleCredentials"]
    assert _AwsStandIn.calls[-1]["auth"] == "refreshed-sso-token"


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
