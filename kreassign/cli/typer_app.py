"""The Typer declaration of kreassign's options: ``--help``, shell completions and the man page come
from it. Parsing of real command lines follows the Apache (jopt-simple) rules in ``kreassign.cli.argv``;
``tests/unit/test_cli_spec.py`` keeps this declaration and ``kreassign.cli.spec`` identical.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kreassign.cli.spec import SPECS

app = typer.Typer(
    name="kreassign",
    add_completion=False,
    context_settings={"help_option_names": ["--help"]},
    help="This tool helps to move topic partitions between replicas. "
    "A drop-in replacement for Apache Kafka's kafka-reassign-partitions.",
)


_EXT = "kreassign extensions"


def _help(name: str) -> str:
    return SPECS[name].help


@app.command(
    help="Move topic partitions between brokers and log directories. Exactly one action: --generate, "
    "--execute, --verify, --cancel or --list, or kreassign's --progress. Same options, JSON files, output and "
    "exit codes as Apache Kafka's kafka-reassign-partitions (exit 1 on any error, 0 otherwise; "
    "--fail-if-incomplete adds 2 and 3)."
)
def kreassign(
    # actions
    generate: Annotated[bool, typer.Option("--generate", help=_help("generate"), rich_help_panel="Actions")] = False,
    execute: Annotated[bool, typer.Option("--execute", help=_help("execute"), rich_help_panel="Actions")] = False,
    verify: Annotated[bool, typer.Option("--verify", help=_help("verify"), rich_help_panel="Actions")] = False,
    cancel: Annotated[bool, typer.Option("--cancel", help=_help("cancel"), rich_help_panel="Actions")] = False,
    list_: Annotated[bool, typer.Option("--list", help=_help("list"), rich_help_panel="Actions")] = False,
    progress: Annotated[bool, typer.Option("--progress", help=_help("progress"), rich_help_panel="Actions")] = False,
    # connection
    bootstrap_server: Annotated[
        str | None, typer.Option("--bootstrap-server", help=_help("bootstrap-server"), metavar="HOST:PORT")
    ] = None,
    bootstrap_controller: Annotated[
        str | None,
        typer.Option("--bootstrap-controller", help=_help("bootstrap-controller"), metavar="HOST:PORT"),
    ] = None,
    command_config: Annotated[
        str | None, typer.Option("--command-config", help=_help("command-config"), metavar="FILE")
    ] = None,
    # inputs
    reassignment_json_file: Annotated[
        str | None,
        typer.Option("--reassignment-json-file", help=_help("reassignment-json-file"), metavar="FILE"),
    ] = None,
    topics_to_move_json_file: Annotated[
        str | None,
        typer.Option("--topics-to-move-json-file", help=_help("topics-to-move-json-file"), metavar="FILE"),
    ] = None,
    broker_list: Annotated[
        str | None, typer.Option("--broker-list", help=_help("broker-list"), metavar="0,1,2")
    ] = None,
    disable_rack_aware: Annotated[bool, typer.Option("--disable-rack-aware", help=_help("disable-rack-aware"))] = False,
    throttle: Annotated[int, typer.Option("--throttle", help=_help("throttle"), metavar="BYTES/S")] = -1,
    replica_alter_log_dirs_throttle: Annotated[
        int,
        typer.Option(
            "--replica-alter-log-dirs-throttle",
            help=_help("replica-alter-log-dirs-throttle"),
            metavar="BYTES/S",
        ),
    ] = -1,
    timeout: Annotated[int, typer.Option("--timeout", help=_help("timeout"), metavar="MS")] = 10000,
    additional: Annotated[bool, typer.Option("--additional", help=_help("additional"))] = False,
    preserve_throttles: Annotated[bool, typer.Option("--preserve-throttles", help=_help("preserve-throttles"))] = False,
    disallow_replication_factor_change: Annotated[
        bool,
        typer.Option("--disallow-replication-factor-change", help=_help("disallow-replication-factor-change")),
    ] = False,
    seed: Annotated[
        int | None,
        typer.Option("--seed", help=_help("seed"), metavar="N", rich_help_panel="kreassign extensions"),
    ] = None,
    max_partition_movements: Annotated[
        int | None,
        typer.Option(
            "--max-partition-movements",
            help=_help("max-partition-movements"),
            metavar="P",
            rich_help_panel="kreassign extensions",
        ),
    ] = None,
    max_replica_movements: Annotated[
        int | None,
        typer.Option(
            "--max-replica-movements",
            help=_help("max-replica-movements"),
            metavar="R",
            rich_help_panel="kreassign extensions",
        ),
    ] = None,
    max_leader_movements: Annotated[
        int | None,
        typer.Option(
            "--max-leader-movements",
            help=_help("max-leader-movements"),
            metavar="L",
            rich_help_panel="kreassign extensions",
        ),
    ] = None,
    max_broker_movements: Annotated[
        int | None,
        typer.Option(
            "--max-broker-movements",
            help=_help("max-broker-movements"),
            metavar="N",
            rich_help_panel="kreassign extensions",
        ),
    ] = None,
    order: Annotated[
        str,
        typer.Option("--order", help=_help("order"), metavar="plan|small-first|large-first", rich_help_panel=_EXT),
    ] = "plan",
    adaptive: Annotated[bool, typer.Option("--adaptive", help=_help("adaptive"), rich_help_panel=_EXT)] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help=_help("dry-run"), rich_help_panel="kreassign extensions")
    ] = False,
    journal_file: Annotated[
        str | None,
        typer.Option(
            "--journal-file", help=_help("journal-file"), metavar="FILE", rich_help_panel="kreassign extensions"
        ),
    ] = None,
    poll_interval_ms: Annotated[
        int,
        typer.Option(
            "--poll-interval-ms", help=_help("poll-interval-ms"), metavar="MS", rich_help_panel="kreassign extensions"
        ),
    ] = 1000,
    stall_timeout_ms: Annotated[
        int,
        typer.Option(
            "--stall-timeout-ms", help=_help("stall-timeout-ms"), metavar="MS", rich_help_panel="kreassign extensions"
        ),
    ] = 300000,
    output: Annotated[
        str, typer.Option("--output", help=_help("output"), metavar="text|json", rich_help_panel="kreassign extensions")
    ] = "text",
    fail_if_incomplete: Annotated[
        bool,
        typer.Option("--fail-if-incomplete", help=_help("fail-if-incomplete"), rich_help_panel="kreassign extensions"),
    ] = False,
    cluster_snapshot_file: Annotated[
        str | None,
        typer.Option(
            "--cluster-snapshot-file", help=_help("cluster-snapshot-file"), metavar="FILE", rich_help_panel=_EXT
        ),
    ] = None,
    write_cluster_snapshot: Annotated[
        str | None,
        typer.Option(
            "--write-cluster-snapshot", help=_help("write-cluster-snapshot"), metavar="FILE", rich_help_panel=_EXT
        ),
    ] = None,
    strategy: Annotated[
        str,
        typer.Option("--strategy", help=_help("strategy"), metavar="apache|balanced", rich_help_panel=_EXT),
    ] = "apache",
    engine: Annotated[
        str,
        typer.Option("--engine", help=_help("engine"), metavar="auto|local|spark", rich_help_panel=_EXT),
    ] = "auto",
    spark_master: Annotated[
        str | None,
        typer.Option("--spark-master", help=_help("spark-master"), metavar="URL", rich_help_panel=_EXT),
    ] = None,
    spark_conf: Annotated[
        list[str] | None,
        typer.Option("--spark-conf", help=_help("spark-conf"), metavar="KEY=VALUE", rich_help_panel=_EXT),
    ] = None,
    replication_factor: Annotated[
        int | None,
        typer.Option("--replication-factor", help=_help("replication-factor"), metavar="N", rich_help_panel=_EXT),
    ] = None,
    version: Annotated[bool, typer.Option("--version", help=_help("version"))] = False,
    zookeeper: Annotated[
        str | None,
        typer.Option("--zookeeper", help=_help("zookeeper"), metavar="HOST:PORT/CHROOT", rich_help_panel="Deprecated"),
    ] = None,
) -> None:
    """Declaration only: kreassign.cli.app.run does the work."""


def click_command():
    return typer.main.get_command(app)


def print_help() -> None:
    command = click_command()
    with command.make_context("kreassign", ["--help"], resilient_parsing=True) as ctx:
        typer.echo(command.get_help(ctx))
