"""The Typer command of --help is built from the option table: exactly its options, and its help goes
through the writer the command is given."""

from __future__ import annotations

from kreassign.cli.spec import SPECS, Arity
from kreassign.cli.typer_app import click_command


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
    for shown in ("--generate", "--zookeeper", "HOST:PORT/CHROOT", "kreassign extensions", "[default: 10000]"):
        assert shown in text, shown
