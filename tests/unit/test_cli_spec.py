"""The Typer command of --help is built from the option table: exactly its options, and its help goes
through the writer the command is given."""

from __future__ import annotations

import pytest

from kreassign.cli.spec import SPECS, Arity
from kreassign.cli.typer_app import click_command, option_head


def test_typer_declares_exactly_the_spec_options():
    params = {p.opts[0].removeprefix("--"): p for p in click_command().params if p.opts[0].startswith("--")}
    params.pop("help", None)
    assert set(params) == set(SPECS) - {"help"}
    for name, param in params.items():
        spec = SPECS[name]
        assert param.is_flag == (spec.arity is Arity.FLAG), name
        if spec.default is not None:
            assert param.default == spec.default, name


def test_help_goes_through_the_injected_writer(capsys):
    from kreassign.cli.app import run

    out: list[str] = []
    err: list[str] = []
    assert run(["--help"], out.append, err.append) == 0
    assert capsys.readouterr().out == "" and err == []
    text = "".join(out)
    assert "Usage: kreassign [OPTIONS]" in text
    for shown in ("--generate", "--zookeeper", "HOST:PORT/CHROOT", "kreassign: batched --execute", "[default: 10000]"):
        assert shown in text, shown


@pytest.mark.parametrize("width", [40, 80, 140])
def test_help_shows_every_option_name_whole_in_plain_text(width):
    from kreassign.cli.typer_app import help_text

    text = help_text("kreassign", width)
    lines = text.splitlines()
    for spec in SPECS.values():
        assert option_head(spec) in lines, option_head(spec)
    assert "  --watch [SECONDS]" in lines  # an optional value shows as optional (issue 33)
    assert not any(line != line.rstrip() for line in lines)  # no trailing spaces
    assert not set(text) & set("╭╮╰╯│─━"), "box drawing"
    assert "\x1b" not in text
    wrapped = [line for line in lines if not line.startswith("  --")]
    assert all(len(line) <= max(20, width - 1) for line in wrapped if " " in line.strip())


@pytest.mark.parametrize(
    ("argv0", "name"),
    [
        ("/usr/local/bin/kafka-reassign-partitions", "kafka-reassign-partitions"),
        ("kreassign", "kreassign"),
        ("/x/kreassign/__main__.py", "kreassign"),
        ("/opt/kafka/bin/kafka-reassign-partitions.sh", "kafka-reassign-partitions.sh"),
        ("pytest", "kreassign"),
    ],
)
def test_usage_names_the_program_it_was_invoked_by(argv0, name):
    from kreassign.cli.typer_app import help_text, program_name

    assert program_name(argv0) == name
    assert help_text(program_name(argv0)).startswith(f"Usage: {name} [OPTIONS]\n")


def test_dash_h_is_help_but_not_a_short_option_cluster():
    from kreassign.cli.argv import OptionSyntaxError, validate

    assert validate(["-h"]).kind == "help"
    assert validate(["--generate", "-h"]).kind == "help"
    with pytest.raises(OptionSyntaxError, match=r"^h is not a recognized option$"):
        validate(["-hx"])


def test_help_shows_the_apache_options_first_and_kreassigns_grouped():
    """Issue 33: --help listed --max-disk-usage among the Apache options, and was 225 lines."""
    from kreassign.cli.spec import APACHE_ACTIONS, PANELS
    from kreassign.cli.typer_app import help_text

    text = help_text("kreassign", 80)
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.endswith(":") and not line.startswith(" ") and line[:-1] in PANELS:
            current = line[:-1]
            sections[current] = []
        elif current and line.startswith("  --"):
            sections[current].append(line.split()[0].removeprefix("--").rstrip(","))
    assert list(sections) == list(PANELS)
    assert sections["Actions"] == list(APACHE_ACTIONS)
    apache_options = [s.name for s in SPECS.values() if s.apache and s.name not in APACHE_ACTIONS]
    assert sections["Options"] == apache_options and "max-disk-usage" not in sections["Options"]
    assert "max-disk-usage" in sections["kreassign: plans (--generate)"]
    assert "progress" in sections["kreassign: progress and output"]
    assert len(text.splitlines()) <= 200


def test_the_help_of_throttle_names_auto():
    """--throttle takes `auto` on a batched run: its own entry says so (it was named only under the options
    that go with it)."""
    from kreassign.cli.app import run

    out: list[str] = []
    assert run(["--help"], out.append, out.append) == 0
    entry = "".join(out).split("  --throttle BYTES/S\n", 1)[1].split("\n  --", 1)[0]
    assert "Or auto (batched runs)" in " ".join(entry.split())
