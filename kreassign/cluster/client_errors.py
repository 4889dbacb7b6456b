"""Failures of the two Kafka clients as the Apache tool reports them: Java's exception class and message
(the ``Error:`` line), with notes that name what to check (printed by the CLI on stderr)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kreassign.cluster.kafka_errors import ERRORS_PACKAGE, TIMEOUT_EXCEPTION, error_for, java_exception
from kreassign.cluster.kafka_python_calls import retriable_kafka_python_errors
from kreassign.cluster.librdkafka_calls import without_librdkafka_prefix
from kreassign.errors import ClusterError, ClusterTimeoutError, ConfigError, KreassignError

UNSUPPORTED_WITH_CONTROLLERS = (
    ERRORS_PACKAGE + "UnsupportedEndpointTypeException: This Admin API is not yet supported when "
    "communicating directly with the controller quorum."
)


class ClientErrors:
    """The errors of one adapter: ``address`` is its bootstrap address, ``api_timeout_s`` its deadline."""

    def __init__(
        self,
        address: str,
        using_controllers: bool,
        api_timeout_s: float,
        security_protocol: str,
        mechanism: str | None = None,
        config_notes: tuple[str, ...] = (),
    ) -> None:
        self.address = address
        self.using_controllers = using_controllers
        self.api_timeout_s = api_timeout_s
        self.security_protocol = security_protocol
        self.mechanism = mechanism
        #: what the --command-config file left unresolved (config provider placeholders): part of a login failure
        self.config_notes = config_notes

    def timeout(self, call: str) -> ClusterTimeoutError:
        """Java's text for a call that found no node before its deadline; a note names the address."""
        error = ClusterTimeoutError(f"{TIMEOUT_EXCEPTION}: Timed out waiting for a node assignment. Call: {call}")
        kind = "bootstrap controllers" if self.using_controllers else "bootstrap servers"
        option = "--bootstrap-controller" if self.using_controllers else "--bootstrap-server"
        error.add_note(f"No answer from the {kind} {self.address} within {self.api_timeout_s:g} s.")
        error.add_note(
            f"Check that {option} names a listener reachable from this host (host, port, firewall) and that "
            f"its security protocol is {self.security_protocol} (else set security.protocol in the "
            "--command-config file)."
        )
        return error

    def refused(self, call: str, waited_s: float) -> ClusterTimeoutError:
        """Java's timeout text, raised early: every bootstrap address refused the TCP connection."""
        error = ClusterTimeoutError(f"{TIMEOUT_EXCEPTION}: Timed out waiting for a node assignment. Call: {call}")
        kind = "bootstrap controllers" if self.using_controllers else "bootstrap servers"
        option = "--bootstrap-controller" if self.using_controllers else "--bootstrap-server"
        error.add_note(
            f"Every address of the {kind} {self.address} refused the connection for {waited_s:g} s: nothing "
            f"listens there. The Apache tool waits its whole deadline ({self.api_timeout_s:g} s) and then fails "
            "with this error; kreassign fails sooner."
        )
        nodes = "controllers" if self.using_controllers else "brokers"
        error.add_note(f"Check the port of {option} and that the Kafka {nodes} are running.")
        return error

    def unknown_nodes(self, call: str, missing: Sequence[str], known: Sequence[str]) -> ClusterTimeoutError:
        """Java's text for a call sent to node ids the cluster does not report (Java waits for them until
        its deadline); the note names those ids, not the bootstrap address, which did answer."""
        error = ClusterTimeoutError(f"{TIMEOUT_EXCEPTION}: Timed out waiting for a node assignment. Call: {call}")
        kind, where = ("controller", "quorum") if self.using_controllers else ("broker", "cluster")
        plural = "s" if len(missing) > 1 else ""
        error.add_note(
            f"{kind.capitalize()}{plural} {', '.join(missing)} {'are' if plural else 'is'} not in the {where} "
            f"{self.address}, which reports {kind}s {', '.join(known) or '(none)'}: the Apache tool waits for "
            f"{'them' if plural else 'it'} until its deadline ({self.api_timeout_s:g} s) and then fails with this "
            "error; kreassign fails at once. Check the broker ids in the input."
        )
        return error

    def sasl_failure(self, detail: str) -> ClusterError:
        error = ClusterError(f"{ERRORS_PACKAGE}SaslAuthenticationException: {detail}")
        if self.mechanism == "GSSAPI":
            error.add_note(
                f"The cluster at {self.address} refused the Kerberos login: check the principal in sasl.jaas.config, "
                "sasl.kerberos.service.name (the brokers' principals are <service>/<broker host>@REALM) and that "
                "the KDC knows both."
            )
        elif self.mechanism == "OAUTHBEARER":
            error.add_note(
                f"The cluster at {self.address} refused the OAUTHBEARER token: check that the brokers accept the "
                "identity provider's tokens (their JWKS URL, expected audience and issuer), the scope, and the "
                "token's subject claim."
            )
        else:
            error.add_note(
                f"The cluster at {self.address} refused the SASL login: check sasl.mechanism and the username and "
                "password in sasl.jaas.config of the --command-config file, and that the user exists for that "
                "mechanism (kafka-configs --describe --entity-type users for SCRAM)."
            )
        for note in self.config_notes:
            error.add_note(note)
        return error

    def from_librdkafka(self, error: Any, call: str) -> ClusterError:
        """A ``confluent_kafka.KafkaError`` as the Java exception the Apache tool would report."""
        from confluent_kafka import KafkaError

        code = error.code()
        if code > 0:
            text = error.str()
            generic = KafkaError(code).str()
            return error_for(java_exception(code, None if text == generic else text))
        if code in (
            KafkaError._TIMED_OUT,
            KafkaError._TIMED_OUT_QUEUE,
            KafkaError._TRANSPORT,
            KafkaError._ALL_BROKERS_DOWN,
            KafkaError._RESOLVE,
        ):
            return self.timeout(call)
        if code == KafkaError._AUTHENTICATION:
            return self.sasl_failure(without_librdkafka_prefix(error.str()))
        if code == KafkaError._SSL:
            failure = ClusterError(f"{ERRORS_PACKAGE}SslAuthenticationException: SSL handshake failed")
            failure.add_note(error.str())
            failure.add_note(
                f"The TLS handshake with {self.address} failed: check that the listener speaks "
                f"{self.security_protocol}, that ssl.truststore.* in the --command-config file holds the "
                "CA that signed the broker certificate, that the broker's certificate matches the host name "
                "(or set ssl.endpoint.identification.algorithm= to skip that check), and ssl.keystore.* if "
                "the broker requires client certificates."
            )
            return failure
        return ClusterError(f"org.apache.kafka.common.KafkaException: {error.str()}")

    def from_kafka_python(self, exc: BaseException, call: str) -> KreassignError:
        import kafka.errors as errors

        if isinstance(exc, KreassignError):
            return exc
        if isinstance(exc, retriable_kafka_python_errors()):
            return self.timeout(call)
        if isinstance(exc, errors.IncompatibleBrokerVersion):
            return ClusterError(f"{ERRORS_PACKAGE}UnsupportedVersionException: {exc}")
        if isinstance(exc, errors.SaslAuthenticationFailedError):
            return self.sasl_failure(str(exc).split(": ", 1)[-1])
        if isinstance(exc, errors.BrokerResponseError) and getattr(exc, "errno", None) is not None:
            return error_for(java_exception(exc.errno))
        if isinstance(exc, errors.KafkaConfigurationError | ValueError | TypeError):
            return ConfigError(f"the Kafka client (kafka-python) refused the client configuration: {exc}")
        return ClusterError(f"org.apache.kafka.common.KafkaException: {exc}")

    def unsupported_with_controllers(self) -> ClusterError:
        return ClusterError(UNSUPPORTED_WITH_CONTROLLERS)
