"""Java keystores and truststores (JKS, PKCS12) converted for both clients with keytool and openssl."""

from __future__ import annotations

import shutil
import ssl
import stat
import subprocess
from pathlib import Path

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.errors import ConfigError

SECRET = "s3cr3t-Value"

PASSWORD = "storepass1"


def keytool(*args: str) -> None:
    fast_start = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC")
    subprocess.run(["keytool", *fast_start, *args], check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def java_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CA, a JKS and a PKCS12 truststore with it, and a JKS client keystore whose key has its own password."""
    if shutil.which("keytool") is None or shutil.which("openssl") is None:
        pytest.fail("keytool (Java) and openssl are needed to test keystore conversion")
    folder = tmp_path_factory.mktemp("stores")
    ca, ca_pem = folder / "ca.p12", folder / "ca.pem"
    keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-dname", "CN=test-ca", "-ext", "bc:c",
            "-keystore", str(ca), "-storetype", "PKCS12", "-storepass", PASSWORD)  # fmt: skip
    keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", str(ca), "-storepass", PASSWORD, "-file", str(ca_pem))
    stores = {"ca": ca_pem}
    for store_type in ("JKS", "PKCS12"):
        path = folder / f"truststore.{store_type.lower()}"
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_pem), "-keystore", str(path),
                "-storetype", store_type, "-storepass", PASSWORD)  # fmt: skip
        stores[f"truststore-{store_type}"] = path
    client, csr, crt = folder / "client.jks", folder / "client.csr", folder / "client.crt"
    keytool("-genkeypair", "-alias", "client", "-keyalg", "RSA", "-dname", "CN=client", "-keystore", str(client),
            "-storetype", "JKS", "-storepass", PASSWORD, "-keypass", "keypass2")  # fmt: skip
    keytool("-certreq", "-alias", "client", "-keystore", str(client), "-storepass", PASSWORD, "-keypass", "keypass2",
            "-file", str(csr))  # fmt: skip
    keytool("-gencert", "-alias", "ca", "-keystore", str(ca), "-storepass", PASSWORD, "-infile", str(csr),
            "-outfile", str(crt))  # fmt: skip
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_pem), "-keystore", str(client),
            "-storepass", PASSWORD)  # fmt: skip
    keytool("-importcert", "-noprompt", "-alias", "client", "-file", str(crt), "-keystore", str(client),
            "-storepass", PASSWORD, "-keypass", "keypass2")  # fmt: skip
    stores["keystore-JKS"] = client
    return stores


@pytest.mark.parametrize("store_type", ["JKS", "PKCS12"])
def test_java_truststore_becomes_private_pem(java_stores: dict[str, Path], store_type: str) -> None:
    config = ClientConfig(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(java_stores[f"truststore-{store_type}"]),
            "ssl.truststore.type": store_type,
            "ssl.truststore.password": PASSWORD,
        }
    )
    pem = Path(config.librdkafka_config()["ssl.ca.location"])
    assert pem.read_text().strip() == java_stores["ca"].read_text().strip()
    assert stat.S_IMODE(pem.stat().st_mode) == 0o600
    assert stat.S_IMODE(pem.parent.stat().st_mode) == 0o700
    assert config.kafka_python_config()["ssl_cafile"] == str(pem)
    ssl.create_default_context(cafile=str(pem))


def test_jks_keystore_with_its_own_key_password_serves_both_clients(java_stores: dict[str, Path]) -> None:
    config = ClientConfig(
        {
            "security.protocol": "SSL",
            "ssl.keystore.location": str(java_stores["keystore-JKS"]),
            "ssl.keystore.password": PASSWORD,
            "ssl.key.password": "keypass2",
        }
    )
    librdkafka = config.librdkafka_config()
    assert Path(librdkafka["ssl.keystore.location"]).suffix == ".p12"
    assert librdkafka["ssl.keystore.password"] not in (PASSWORD, "keypass2")  # a fresh random one
    kafka_python = config.kafka_python_config()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_cert_chain(kafka_python["ssl_certfile"], kafka_python["ssl_keyfile"], kafka_python["ssl_password"])
    chain = Path(kafka_python["ssl_certfile"]).read_text()
    assert chain.count("BEGIN CERTIFICATE") == 2  # the client's own certificate first, then the CA
    from confluent_kafka.admin import AdminClient

    AdminClient({**librdkafka, "bootstrap.servers": "127.0.0.1:1"})  # librdkafka loads the PKCS12 file


def test_wrong_store_password_is_clear_and_secret_free(java_stores: dict[str, Path]) -> None:
    config = ClientConfig(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(java_stores["truststore-PKCS12"]),
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.password": SECRET,
        }
    )
    with pytest.raises(ConfigError) as failure:
        config.librdkafka_config()
    assert failure.value.message.startswith(f"cannot read ssl.truststore.location {java_stores['truststore-PKCS12']}")
    assert SECRET not in failure.value.message
