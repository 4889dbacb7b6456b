"""Resolve the pinned Apache Kafka release's jars from Maven Central into a local cache folder.

Two Maven declarations: ``pom.xml`` pins the KRaft release kreassign is compatible with (4.4.0), and
``pom-zookeeper.xml`` the ZooKeeper-mode release of the legacy ``--zookeeper`` path (the newest 3.9.x)
and, resolved with another ``kafka.version``, the last Apache tool that had ``--zookeeper`` (2.8.2).
Each release lands in ``<cache>/kafka-<version>/libs``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from kreassign.errors import KreassignError

POM = Path(__file__).with_name("pom.xml")
ZOOKEEPER_POM = Path(__file__).with_name("pom-zookeeper.xml")
KDC_POM = Path(__file__).with_name("pom-kdc.xml")
TOOLS_LOG4J = Path(__file__).with_name("log4j2-tools.properties")
BROKER_LOG4J = Path(__file__).with_name("log4j2-broker.properties")
# Kafka 2.8 and 3.x log with Log4j 1 (reload4j): their own configuration files and system property.
LEGACY_TOOLS_LOG4J = Path(__file__).with_name("log4j-tools.properties")
LEGACY_BROKER_LOG4J = Path(__file__).with_name("log4j-broker.properties")

REASSIGN_MAIN_CLASS = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
# The last Apache tool with --zookeeper (Kafka 2.8.x), the reference for the legacy path's texts.
LEGACY_REASSIGN_MAIN_CLASS = "kafka.admin.ReassignPartitionsCommand"
LEGACY_TOOL_KAFKA_VERSION = "2.8.2"

# JVM options of Apache's bin/kafka-run-class.sh for tools, so that the reference tool is measured as
# operators run it (KAFKA_HEAP_OPTS defaults to -Xmx256M there).
APACHE_TOOL_JVM_OPTS = (
    "-Xmx256M",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
)


class HarnessError(KreassignError):
    """The local Kafka could not be prepared or started."""


def pinned_kafka_version(pom: Path = POM) -> str:
    match = re.search(r"<kafka.version>([^<]+)</kafka.version>", pom.read_text())
    if not match:  # pragma: no cover - the pom ships with the package
        raise HarnessError(f"no <kafka.version> in {pom}")
    return match.group(1)


def zookeeper_kafka_version() -> str:
    """The ZooKeeper-mode Kafka release of the legacy-path harness (the newest 3.9.x)."""
    return pinned_kafka_version(ZOOKEEPER_POM)


def pom_for(version: str) -> Path:
    """The declaration that resolves ``version``: ``pom.xml`` for 4.x (Log4j 2, kafka-tools), the
    ZooKeeper-era one (Log4j 1 through reload4j) for 2.x and 3.x. A 4.x broker given the Log4j 1 bindings
    logs nothing, so its start line is never seen."""
    return POM if int(version.split(".")[0]) >= 4 else ZOOKEEPER_POM


def log4j_options(version: str, *, broker: bool) -> tuple[str, ...]:
    """JVM system property that points the release's logging at our configuration file."""
    if int(version.split(".")[0]) >= 4:
        return (f"-Dlog4j2.configurationFile={BROKER_LOG4J if broker else TOOLS_LOG4J}",)
    return (f"-Dlog4j.configuration=file:{LEGACY_BROKER_LOG4J if broker else LEGACY_TOOLS_LOG4J}",)


def cache_root() -> Path:
    """``$KREASSIGN_CACHE_DIR``, else ``.cache`` of a source checkout, else ``~/.cache/kreassign``."""
    configured = os.environ.get("KREASSIGN_CACHE_DIR")
    if configured:
        return Path(configured)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").exists():
        return checkout / ".cache"
    return Path.home() / ".cache" / "kreassign"


def check_prerequisites() -> None:
    """Java 17+ and Maven must be on PATH; say exactly what is missing."""
    java = shutil.which("java")
    if not java:
        raise HarnessError("Java 17 or newer is required to run a local Kafka: no 'java' on PATH")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', out)
    if not match or int(match.group(1)) < 17:
        raise HarnessError(f"Java 17 or newer is required to run a local Kafka, found: {out.splitlines()[:1]}")
    if not shutil.which("mvn"):
        raise HarnessError(
            "Maven ('mvn') is required to fetch the Apache Kafka jars: install it (apt-get install maven)"
        )


def kafka_libs(version: str | None = None) -> Path:
    """The folder holding every jar of a release (default: the pinned one), resolving it with Maven on
    first use."""
    version = version or pinned_kafka_version()
    libs = cache_root() / f"kafka-{version}" / "libs"
    stamp = libs / ".complete"
    if stamp.exists():
        return libs
    check_prerequisites()
    _maven_copy(
        pom_for(version), libs, [f"-Dkafka.version={version}"], f"kafka_2.13-{version}.jar", f"Apache Kafka {version}"
    )
    return libs


def _maven_copy(pom: Path, libs: Path, properties: list[str], expected: str, what: str) -> None:
    """Resolve every runtime jar of ``pom`` into ``libs`` (through a partial folder, stamped when complete)."""
    tmp = libs.with_name("libs.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = ["mvn", "-q", "-B", "-f", str(pom), *properties, "dependency:copy-dependencies", "-DincludeScope=runtime"]
    proc = subprocess.run([*cmd, f"-DoutputDirectory={tmp}"], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise HarnessError(f"Maven could not resolve {what}:\n{tail}")
    if not any(tmp.glob(expected)):
        raise HarnessError(f"Maven finished but {expected} is missing in {tmp}")
    shutil.rmtree(libs, ignore_errors=True)
    tmp.rename(libs)
    (libs / ".complete").write_text(what + "\n")


def kdc_classpath() -> str:
    """Apache Kerby's KDC (``pom-kdc.xml``), resolved with Maven on first use."""
    version = re.search(r"<kerby.version>([^<]+)</kerby.version>", KDC_POM.read_text()).group(1)
    libs = cache_root() / f"kerby-{version}" / "libs"
    if not (libs / ".complete").exists():
        check_prerequisites()
        _maven_copy(KDC_POM, libs, [], f"kerb-simplekdc-{version}.jar", f"Apache Kerby {version}")
    return str(libs / "*")


def tiered_storage_jar(version: str) -> Path:
    """Kafka's storage test jar of a release, which holds ``LocalTieredStorage`` (a RemoteStorageManager on a
    local folder, what Kafka's own tiered-storage tests use), resolved with Maven on first use. Maven Central has
    it up to 4.3.x; 4.4.0 was published without its test jars."""
    jar = cache_root() / f"kafka-{version}" / "tiered" / f"kafka-storage-{version}-test.jar"
    if jar.exists():
        return jar
    check_prerequisites()
    cmd = [
        "mvn",
        "-q",
        "-B",
        "dependency:copy",
        f"-Dartifact=org.apache.kafka:kafka-storage:{version}:jar:test",
        f"-DoutputDirectory={jar.parent}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not jar.exists():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise HarnessError(f"Maven could not resolve Kafka {version}'s storage test jar (LocalTieredStorage):\n{tail}")
    return jar


def classpath(version: str | None = None) -> str:
    return str(kafka_libs(version) / "*")


def apache_tool_command(
    java_opts: tuple[str, ...] = APACHE_TOOL_JVM_OPTS, version: str | None = None, main_class: str = REASSIGN_MAIN_CLASS
) -> list[str]:
    """argv prefix that runs Apache's kafka-reassign-partitions from the jars of a release (default: the
    pinned one)."""
    version = version or pinned_kafka_version()
    return ["java", *java_opts, *log4j_options(version, broker=False), "-cp", classpath(version), main_class]


def legacy_tool_command() -> list[str]:
    """argv prefix that runs Kafka 2.8.2's kafka-reassign-partitions, the last one with --zookeeper.
    It runs on Java 17 as it is (checked: no extra JVM flags needed)."""
    return apache_tool_command(version=LEGACY_TOOL_KAFKA_VERSION, main_class=LEGACY_REASSIGN_MAIN_CLASS)
