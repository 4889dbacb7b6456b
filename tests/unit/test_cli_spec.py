"""The Typer declaration (help, completions, man page) and the Apache option table never drift apart."""

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
