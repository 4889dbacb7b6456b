"""Every property of the Java admin client of the pinned Kafka release is in kreassign's table (translated, no
effect, or refused), read out of the jar by tests/oracle/AdminConfigNames.java: a property a new release adds
cannot go unnoticed. docs/command-line.md holds the same table."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kreassign.cluster.admin_properties import ADMIN_CLIENT_PROPERTIES, NO_EFFECT, REFUSED, TRANSLATED, markdown_table
from kreassign.cluster.client_config import ClientConfig
from kreassign.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "oracle" / "AdminConfigNames.java"


def _java_names() -> list[str]:
    classpath = os.environ.get("KREASSIGN_KAFKA_CLASSPATH")
    java = shutil.which("java")
    if not classpath or java is None:
        pytest.fail("the Kafka jars (KREASSIGN_KAFKA_CLASSPATH, set by tests/conftest.py) and java are required")
    done = subprocess.run([java, "-cp", classpath, str(PROGRAM)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_every_property_of_the_jar_is_in_the_table():
    names = _java_names()
    assert len(names) > 90
    assert sorted(ADMIN_CLIENT_PROPERTIES) == names


def test_each_kind_has_a_reason():
    for name, prop in ADMIN_CLIENT_PROPERTIES.items():
        assert prop.kind in (TRANSLATED, NO_EFFECT, REFUSED), name
        assert prop.note and "\n" not in prop.note, name


def test_the_docs_hold_the_table():
    assert markdown_table() in (ROOT / "docs" / "command-line.md").read_text()


@pytest.mark.parametrize("name", sorted(n for n, p in ADMIN_CLIENT_PROPERTIES.items() if p.kind == NO_EFFECT))
def test_a_property_without_effect_is_accepted(name):
    assert ClientConfig({name: "1"}).warnings == ()


@pytest.mark.parametrize(
    "name",
    sorted(
        n
        for n, p in ADMIN_CLIENT_PROPERTIES.items()
        if p.kind == REFUSED and not n.startswith("sasl.oauthbearer.assertion.")
    ),
)
def test_a_refused_property_is_one_line_naming_it(name):
    with pytest.raises(ConfigError) as failure:
        ClientConfig({name: "x"})
    assert failure.value.message.startswith(f"{name} is not supported by kreassign: ")
    assert "\n" not in failure.value.message
