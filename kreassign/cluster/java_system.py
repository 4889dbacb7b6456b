"""The Java system properties the Apache tool would run with, read from ``KAFKA_OPTS``.

``kafka-run-class.sh`` passes ``$KAFKA_OPTS`` to the JVM, and a few security settings exist only as system
properties: the Kerberos configuration (``java.security.krb5.conf``), a JAAS file
(``java.security.auth.login.config``), the URLs and files an OAuth login may read
(``org.apache.kafka.sasl.oauthbearer.allowed.urls`` / ``.allowed.files``), the config provider classes
allowed (``org.apache.kafka.automatic.config.providers``). An operator whose Apache tool works has them in
``KAFKA_OPTS``; kreassign reads the same variable, so the same environment works for both.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

KRB5_CONF = "java.security.krb5.conf"
JAAS_FILE = "java.security.auth.login.config"
ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
ALLOWED_FILES = "org.apache.kafka.sasl.oauthbearer.allowed.files"
AUTOMATIC_CONFIG_PROVIDERS = "org.apache.kafka.automatic.config.providers"


def java_system_properties(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``-Dname=value`` (and ``-Dname``, an empty value) of ``KAFKA_OPTS``; the last one of a name wins."""
    text = (os.environ if environ is None else environ).get("KAFKA_OPTS", "")
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    found: dict[str, str] = {}
    for word in words:
        if word.startswith("-D") and len(word) > 2:
            name, _, value = word[2:].partition("=")
            found[name] = value
    return found


def allowed_list(properties: Mapping[str, str], name: str) -> set[str]:
    """A comma-separated allow-list property (trimmed entries; none set: nothing allowed, as in Kafka 4)."""
    return {entry.strip() for entry in properties.get(name, "").split(",") if entry.strip()}
