"""A Kerberos KDC for the secure local cluster: Apache Kerby's ``SimpleKdcServer`` (the KDC of Kafka's own
``MiniKdc``), resolved from Maven Central (``pom-kdc.xml``) and run as the single-file Java program ``Kdc.java``.

It listens on ``127.0.0.1:<port>`` (TCP), makes principals with random keys and exports their keytabs, and
writes ticket caches (``FILE:``) for the ticket-cache logins, on commands sent to its standard input. It gets
SIGKILL when the Python process that started it dies, like the brokers. ``krb5_conf`` is the configuration both
the JVMs (``-Djava.security.krb5.conf``) and the MIT library (``KRB5_CONFIG``) read.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from pathlib import Path

from kreassign.devcluster.jars import HarnessError, kdc_classpath

REALM = "KREASSIGN.TEST"
KDC_PROGRAM = Path(__file__).with_name("Kdc.java")


class KerberosKdc:
    def __init__(self, directory: Path, port: int, realm: str = REALM) -> None:
        self.directory = Path(directory)
        self.port = port
        self.realm = realm
        self.process: subprocess.Popen | None = None
        self._lock = threading.Lock()

    @property
    def krb5_conf(self) -> Path:
        return self.directory / "krb5.conf"

    def start(self, timeout: float = 90.0) -> KerberosKdc:
        """Start the KDC and wait until it serves."""
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> KerberosKdc:
        """Start the KDC process without waiting (its JVM boots while the brokers' storage is formatted)."""
        from kreassign.devcluster.processes import die_with_parent

        self.directory.mkdir(parents=True, exist_ok=True)
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"    default_realm = {self.realm}\n"
            "    dns_lookup_kdc = false\n    dns_lookup_realm = false\n"
            "    dns_canonicalize_hostname = false\n    rdns = false\n"
            "    udp_preference_limit = 1\n    forwardable = true\n"
            f"[realms]\n    {self.realm} = {{\n        kdc = 127.0.0.1:{self.port}\n    }}\n"
            f"[domain_realm]\n    localhost = {self.realm}\n    127.0.0.1 = {self.realm}\n"
        )
        command = ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", kdc_classpath()]
        command += [str(KDC_PROGRAM), str(self.directory), self.realm, str(self.port)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(self.directory / "kdc.log", "wb"),  # noqa: SIM115 - the child owns it
            text=True,
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGKILL),
        )
        return self

    def wait_ready(self, timeout: float = 90.0) -> KerberosKdc:
        line = self._read_line(timeout)
        if line != "ready":
            self.stop()
            log = (self.directory / "kdc.log").read_text(errors="replace")[-2000:]
            raise HarnessError(f"the KDC did not start ({line!r}):\n{log}")
        return self

    def _read_line(self, timeout: float) -> str:
        assert self.process is not None and self.process.stdout is not None
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        return result[0].strip() if result else ""

    def command(self, *words: str, timeout: float = 60.0) -> None:
        with self._lock:
            if self.process is None or self.process.poll() is not None:
                raise HarnessError("the KDC is not running")
            assert self.process.stdin is not None
            self.process.stdin.write(" ".join(words) + "\n")
            self.process.stdin.flush()
            answer = self._read_line(timeout)
        if answer != "ok":
            raise HarnessError(f"KDC command {words[0]} failed: {answer}")

    def principal(self, name: str, keytab: Path) -> Path:
        """``name@REALM`` with a random key, its keytab written to ``keytab``."""
        self.command("principal", f"{name}@{self.realm}", str(keytab))
        keytab.chmod(0o600)
        return keytab

    def delete(self, name: str) -> None:
        self.command("delete", f"{name}@{self.realm}")

    def ticket_cache(self, name: str, keytab: Path, cache: Path, lifetime_s: int = 36000) -> Path:
        """A ``FILE:`` ticket cache of ``name``, as ``kinit -kt keytab name`` makes it."""
        self.command("ccache", f"{name}@{self.realm}", str(keytab), str(cache), str(lifetime_s))
        cache.chmod(0o600)
        return cache

    def stop(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None
