"""Every command-line option, declared once: the Apache tool's rules for each action, and what ``--help``,
the shell completions and the man page show. Pure data, no imports.

* ``kreassign.cli.argv`` parses real command lines with the Apache (jopt-simple) rules from this table
  (long options, ``--name=value``, exact names only, required and optional arguments);
* ``kreassign.cli.typer_app`` renders ``--help`` from it (and declares the Typer command);
* ``kreassign.cli.docgen`` writes the completions and the man page from it.

The table is in the order ``--help`` lists the options.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Arity(Enum):
    FLAG = "flag"
    REQUIRED = "required"  # always takes the next token
    OPTIONAL = "optional"  # takes the next token unless it looks like an option


ACTIONS_PANEL = "Actions"
OPTIONS_PANEL = "Options"
BATCHED_PANEL = "kreassign: batched --execute (KIP-435)"
PROGRESS_PANEL = "kreassign: progress and output"
PLANS_PANEL = "kreassign: plans (--generate)"
SNAPSHOT_PANEL = "kreassign: snapshots and Spark"
EXTENSIONS_PANELS = (BATCHED_PANEL, PROGRESS_PANEL, PLANS_PANEL, SNAPSHOT_PANEL)
DEPRECATED_PANEL = "Deprecated"
PANELS = (ACTIONS_PANEL, OPTIONS_PANEL, *EXTENSIONS_PANELS, DEPRECATED_PANEL)
"""The groups of ``--help`` and of the man page's OPTIONS, in order: the Apache tool's actions and options
first (exactly its own), then kreassign's, grouped by what they are for."""


@dataclass(frozen=True)
class OptionSpec:
    name: str
    arity: Arity
    value_type: type = str
    default: object = None
    help: str = ""
    metavar: str = ""  # what --help and the man page show for the value (a|b: the choices; FILE: a path)
    apache: bool = True  # False: a kreassign extension, not in the Apache tool
    panel: str = OPTIONS_PANEL
    repeated: bool = False  # the option may be given several times, each value kept (--spark-conf)

    def __str__(self) -> str:
        # jopt-simple's OptionSpec.toString(), used in the Apache messages: [throttle]
        return f"[{self.name}]"


COMMAND_NAME = "kreassign"
COMMAND_SUMMARY = (
    "This tool helps to move topic partitions between replicas. "
    "A drop-in replacement for Apache Kafka's kafka-reassign-partitions."
)
COMMAND_HELP = (
    "Move topic partitions between brokers and log directories. Exactly one action: --generate, "
    "--execute, --verify, --cancel or --list, or kreassign's --progress. Same options, JSON files, output and "
    "exit codes as Apache Kafka's kafka-reassign-partitions (exit 1 on any error, 0 otherwise; "
    "--fail-if-incomplete adds 2 and 3)."
)

APACHE_ACTIONS = ("generate", "execute", "verify", "cancel", "list")
ACTIONS = (*APACHE_ACTIONS, "progress")

_SPECS = (
    OptionSpec(
        "generate",
        Arity.FLAG,
        help="Generate a candidate partition reassignment configuration. Note that this only generates "
        "a candidate assignment, it does not execute it.",
        panel=ACTIONS_PANEL,
    ),
    OptionSpec(
        "execute",
        Arity.FLAG,
        help="Kick off the reassignment as specified by the --reassignment-json-file option.",
        panel=ACTIONS_PANEL,
    ),
    OptionSpec(
        "verify",
        Arity.FLAG,
        help="Verify if the reassignment completed as specified by the --reassignment-json-file option. "
        "If there is a throttle engaged for the replicas specified, and the rebalance has completed, "
        "the throttle will be removed",
        panel=ACTIONS_PANEL,
    ),
    OptionSpec("cancel", Arity.FLAG, help="Cancel an active reassignment.", panel=ACTIONS_PANEL),
    OptionSpec("list", Arity.FLAG, help="List all active partition reassignments.", panel=ACTIONS_PANEL),
    OptionSpec(
        "progress",
        Arity.FLAG,
        help=(
            "for each partition and target broker of the --reassignment-json-file, whether the "
            "replica is in sync or how far behind it is (messages, bytes, rate, ETA); with --watch, until "
            "the plan is done."
        ),
        apache=False,
        panel=PROGRESS_PANEL,
    ),
    OptionSpec(
        "bootstrap-server",
        Arity.OPTIONAL,
        help="the server(s) to use for bootstrapping.",
        metavar="HOST:PORT",
    ),
    OptionSpec(
        "bootstrap-controller",
        Arity.OPTIONAL,
        help="The controller to use for reassignment. By default, the tool will get the quorum controller. "
        "This option supports the actions --cancel and --list.",
        metavar="HOST:PORT",
    ),
    OptionSpec(
        "command-config",
        Arity.REQUIRED,
        help="Property file containing configs to be passed to Admin Client.",
        metavar="FILE",
    ),
    OptionSpec(
        "reassignment-json-file",
        Arity.REQUIRED,
        help="The JSON file with the partition reassignment configuration. The format to use is - "
        '{"partitions": [{"topic": "foo", "partition": 1, "replicas": [1,2,3], '
        '"log_dirs": ["dir1","dir2","dir3"] }], "version":1} Note that "log_dirs" is optional. When it '
        "is specified, its length must equal the length of the replicas list. The value in this list can "
        'be either "any" or the absolution path of the log directory on the broker. If absolute log '
        "directory path is specified, the replica will be moved to the specified log directory on the broker.",
        metavar="FILE",
    ),
    OptionSpec(
        "topics-to-move-json-file",
        Arity.REQUIRED,
        help="Generate a reassignment configuration to move the partitions of the specified topics to the "
        'list of brokers specified by the --broker-list option. The format to use is - {"topics": '
        '[{"topic": "foo"},{"topic": "foo1"}], "version":1}',
        metavar="FILE",
    ),
    OptionSpec(
        "broker-list",
        Arity.REQUIRED,
        help='The list of brokers to which the partitions need to be reassigned in the form "0,1,2". '
        "This is required if --topics-to-move-json-file is used to generate reassignment configuration",
        metavar="0,1,2",
    ),
    OptionSpec("disable-rack-aware", Arity.FLAG, help="Disable rack aware replica assignment"),
    OptionSpec(
        "throttle",
        Arity.REQUIRED,
        int,
        -1,
        help="The movement of partitions between brokers will be throttled to this value (bytes/sec). "
        "This option can be included with --execute when a reassignment is started, and it can be altered "
        "by resubmitting the current reassignment along with the --additional flag. The throttle rate "
        "should be at least 1 KB/s. Or auto (batched runs): from each broker's headroom.",
        metavar="BYTES/S",
    ),
    OptionSpec(
        "replica-alter-log-dirs-throttle",
        Arity.REQUIRED,
        int,
        -1,
        help="The movement of replicas between log directories on the same broker will be throttled to "
        "this value (bytes/sec). This option can be included with --execute when a reassignment is "
        "started, and it can be altered by resubmitting the current reassignment along with the "
        "--additional flag. The throttle rate should be at least 1 KB/s.",
        metavar="BYTES/S",
    ),
    OptionSpec(
        "timeout",
        Arity.REQUIRED,
        int,
        10000,
        help="The maximum time in ms to wait for log directory replica assignment to begin.",
        metavar="MS",
    ),
    OptionSpec(
        "additional",
        Arity.FLAG,
        help="Execute this reassignment in addition to any other ongoing ones. This option can also be "
        "used to change the throttle of an ongoing reassignment.",
    ),
    OptionSpec("preserve-throttles", Arity.FLAG, help="Do not modify broker or topic throttles."),
    OptionSpec(
        "disallow-replication-factor-change",
        Arity.FLAG,
        help="Denies the ability to change a partition's replication factor as part of this reassignment "
        "through adding validation against it.",
    ),
    OptionSpec(
        "seed",
        Arity.REQUIRED,
        int,
        help="seed the --generate placement (java.util.Random): reproducible.",
        metavar="N",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "max-partition-movements",
        Arity.REQUIRED,
        int,
        help=(
            "run --execute as a batched reassignment (KIP-435) that stays attached until done, "
            "with at most this many partitions moving at once."
        ),
        metavar="P",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "max-replica-movements",
        Arity.REQUIRED,
        int,
        help="at most this many replicas added to a partition per step.",
        metavar="R",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "max-leader-movements",
        Arity.REQUIRED,
        int,
        help="at most this many partitions changing leader at once.",
        metavar="L",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "max-broker-movements",
        Arity.REQUIRED,
        int,
        help=(
            "at most this many steps in flight per broker (a step counts against each broker "
            "receiving a replica and against the partition's leader)."
        ),
        metavar="N",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "order",
        Arity.REQUIRED,
        default="plan",
        help=("which waiting steps start first: plan order, or by size."),
        metavar="plan|small-first|large-first",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "adaptive",
        Arity.FLAG,
        help=("adapt the per-broker limit to the cluster's health."),
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "sample-rates",
        Arity.REQUIRED,
        int,
        help="sample write and read rates for this long: --execute --throttle names the slow moves (batched: "
        "refused, see --allow-slow-moves); --write-cluster-snapshot records them; --generate plans with them.",
        metavar="SECONDS",
        apache=False,
        panel=PROGRESS_PANEL,
    ),
    OptionSpec(
        "broker-capacity",
        Arity.REQUIRED,
        int,
        help="--throttle auto: every broker's network capacity, bytes/s each way.",
        metavar="BYTES/S",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "broker-capacity-file",
        Arity.REQUIRED,
        help='--throttle auto: each broker\'s capacity, JSON {"1": 125000000, ...}.',
        metavar="FILE",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "max-utilisation",
        Arity.REQUIRED,
        help="--throttle auto: throttle = F x capacity less its traffic (default 0.8).",
        metavar="F",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "allow-slow-moves",
        Arity.FLAG,
        help="run despite moves above their throttle share (--sample-rates).",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "dry-run",
        Arity.FLAG,
        help="print the steps and rounds of the batched run and change nothing.",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "journal-file",
        Arity.REQUIRED,
        help=(
            "a batched run's journal (resume, --cancel, --progress) and original; default "
            "$XDG_STATE_HOME/kreassign/clusters/<id>/<plan id>.json."
        ),
        metavar="FILE",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "poll-interval-ms",
        Arity.REQUIRED,
        int,
        1000,
        help=("the longest wait between two reads of the cluster by a batched run (it polls sooner while steps end)."),
        metavar="MS",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "stall-timeout-ms",
        Arity.REQUIRED,
        int,
        300000,
        help=(
            "stop a batched run (throttles restored, journal kept for a resume) when a broker it "
            "needs stays offline, or the cluster keeps failing, for this long."
        ),
        metavar="MS",
        apache=False,
        panel=BATCHED_PANEL,
    ),
    OptionSpec(
        "output",
        Arity.REQUIRED,
        default="text",
        help="text (the Apache output) or json (one JSON document).",
        metavar="text|json",
        apache=False,
        panel=PROGRESS_PANEL,
    ),
    OptionSpec(
        "fail-if-incomplete",
        Arity.FLAG,
        help=(
            "--verify and --progress exit 2 while moves are in progress and 3 when a partition is"
            " neither moving nor at its target (default: 0, as the Apache tool)."
        ),
        apache=False,
        panel=PROGRESS_PANEL,
    ),
    OptionSpec(
        "watch",
        Arity.OPTIONAL,
        float,
        2,
        help=(
            "with --progress, redraw every SECONDS (default 2) until the plan is done or nothing "
            "moves it, then exit as with --fail-if-incomplete."
        ),
        metavar="SECONDS",
        apache=False,
        panel=PROGRESS_PANEL,
    ),
    OptionSpec(
        "cluster-snapshot-file",
        Arity.REQUIRED,
        help=(
            "read the cluster from this snapshot instead of --bootstrap-server, with --generate "
            "(and --execute --dry-run); no cluster access."
        ),
        metavar="FILE",
        apache=False,
        panel=SNAPSHOT_PANEL,
    ),
    OptionSpec(
        "write-cluster-snapshot",
        Arity.REQUIRED,
        help=(
            "an action of its own: write the cluster at --bootstrap-server (brokers, racks, log "
            "dirs, partitions, sizes) to FILE, to plan offline; --topics-to-move-json-file limits it to "
            "those topics."
        ),
        metavar="FILE",
        apache=False,
        panel=SNAPSHOT_PANEL,
    ),
    OptionSpec(
        "strategy",
        Arity.REQUIRED,
        default="apache",
        help=(
            "'apache' (the Apache tool's random placement), 'balanced' (the fewest moves to even "
            "out replicas, leaders and bytes per broker, as the racks allow; report on stderr) or 'leaders' "
            "(reorders replicas to even out preferred leaders; copies nothing; no --broker-list)."
        ),
        metavar="apache|balanced|leaders",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "replace-broker",
        Arity.REQUIRED,
        help=(
            "--generate a plan in which broker NEW takes every replica of broker OLD, at the same"
            " place in each list; nothing else moves. No --broker-list."
        ),
        metavar="OLD=NEW[,OLD=NEW...]",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "topics-regex",
        Arity.REQUIRED,
        help=(
            "--generate for every topic whose whole name matches REGEX, instead of --topics-to-"
            "move-json-file (__* topics only when REGEX contains '__')."
        ),
        metavar="REGEX",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "exclude-topics",
        Arity.REQUIRED,
        help="with --generate, leave out the topics whose whole name matches REGEX.",
        metavar="REGEX",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "engine",
        Arity.REQUIRED,
        default="auto",
        help=(
            "where --strategy balanced runs: 'local', 'spark' (the 'spark' extra) or 'auto' "
            "(Spark from 1,000,000 partitions with a --spark-master cluster). Same plan either way."
        ),
        metavar="auto|local|spark",
        apache=False,
        panel=SNAPSHOT_PANEL,
    ),
    OptionSpec(
        "spark-master",
        Arity.REQUIRED,
        help=(
            "the Spark master for --engine spark: local[N] (default local[*]), spark://HOST:PORT,"
            " yarn, k8s://... or sc://HOST:PORT (Spark Connect)."
        ),
        metavar="URL",
        apache=False,
        panel=SNAPSHOT_PANEL,
    ),
    OptionSpec(
        "spark-conf",
        Arity.REQUIRED,
        help="a Spark setting for --engine spark, KEY=VALUE; repeat for more.",
        metavar="KEY=VALUE",
        apache=False,
        panel=SNAPSHOT_PANEL,
        repeated=True,
    ),
    OptionSpec(
        "max-disk-usage",
        Arity.REQUIRED,
        help=(
            "the share of a broker's disk (or of each volume of a JBOD broker) no broker may end "
            "above, 0 < F <= 1 (default 0.8); a volume already above it is relieved within its broker. "
            "Brokers of unknown capacity are not checked."
        ),
        metavar="F",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "traffic-tolerance",
        Arity.REQUIRED,
        help="known rates: bytes in/out per broker within PCT of the mean (default 10).",
        metavar="PCT",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "bytes-tolerance",
        Arity.REQUIRED,
        help=(
            "how far each broker's bytes may end from the mean, in percent (default 5); the plan "
            "copies the fewest bytes it can to get there, the other rules still hold. 'none': fewest replica"
            " moves only."
        ),
        metavar="PCT",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "move-budget",
        Arity.REQUIRED,
        help=(
            "how many more replicas (200) or bytes (50GB, 1.5TiB) the plan may move than without "
            "a budget, to even out topics, leaders and bytes further. Default: none."
        ),
        metavar="BUDGET",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec(
        "replication-factor",
        Arity.REQUIRED,
        int,
        help=(
            "with --strategy balanced, the replication factor every listed partition should end "
            "with (default: each keeps its own)."
        ),
        metavar="N",
        apache=False,
        panel=PLANS_PANEL,
    ),
    OptionSpec("version", Arity.FLAG, help="Display Kafka version."),
    OptionSpec(
        "zookeeper",
        Arity.REQUIRED,
        help=(
            "DEPRECATED (Apache Kafka removed it in 3.0): the ZooKeeper connection string of a ZooKeeper-"
            "mode cluster (host:port[,...][/chroot]), for --generate, --execute (--throttle) and --verify as"
            " Kafka 2.8's tool. Use --bootstrap-server instead."
        ),
        metavar="HOST:PORT/CHROOT",
        apache=False,
        panel=DEPRECATED_PANEL,
    ),
    OptionSpec("help", Arity.FLAG, help="Print usage information."),
)

SPECS: dict[str, OptionSpec] = {s.name: s for s in _SPECS}

REQUIRED_ARGS: dict[str, tuple[str, ...]] = {
    "verify": ("reassignment-json-file",),
    "generate": ("topics-to-move-json-file", "broker-list"),
    "execute": ("reassignment-json-file",),
    "cancel": ("reassignment-json-file",),
    "list": (),
    "progress": ("reassignment-json-file",),
}


def permitted_args(action: str, uses_bootstrap_server: bool) -> tuple[str, ...]:
    """The Apache tool's permitted options per action, plus kreassign's extensions for that action."""
    bootstrap = "bootstrap-server" if uses_bootstrap_server else "bootstrap-controller"
    apache = {
        "verify": ("bootstrap-server", "command-config", "preserve-throttles"),
        "generate": ("bootstrap-server", "broker-list", "command-config", "disable-rack-aware"),
        "execute": (
            "additional",
            "bootstrap-server",
            "command-config",
            "throttle",
            "replica-alter-log-dirs-throttle",
            "timeout",
            "disallow-replication-factor-change",
        ),
        "cancel": (bootstrap, "command-config", "preserve-throttles", "timeout"),
        "list": (bootstrap, "command-config"),
        "progress": ("bootstrap-server", "command-config"),
    }[action]
    return apache + EXTENSIONS_PER_ACTION.get(action, ())


_BATCHED = (
    "max-partition-movements",
    "max-replica-movements",
    "max-leader-movements",
    "max-broker-movements",
    "order",
    "adaptive",
    "dry-run",
    "poll-interval-ms",
    "stall-timeout-ms",
)

EXTENSIONS_PER_ACTION: dict[str, tuple[str, ...]] = {
    "generate": (
        "seed",
        "output",
        "cluster-snapshot-file",
        "strategy",
        "engine",
        "spark-master",
        "spark-conf",
        "replication-factor",
        "max-disk-usage",
        "bytes-tolerance",
        "traffic-tolerance",
        "sample-rates",
        "move-budget",
        "replace-broker",
        "topics-regex",
        "exclude-topics",
    ),
    "execute": (
        *_BATCHED,
        "journal-file",
        "output",
        "cluster-snapshot-file",
        "sample-rates",
        "allow-slow-moves",
        "broker-capacity",
        "broker-capacity-file",
        "max-utilisation",
    ),
    "verify": ("fail-if-incomplete", "output"),
    "cancel": ("journal-file", "output"),
    "list": ("output",),
    "progress": ("fail-if-incomplete", "output", "watch", "journal-file"),
}

BATCHED_OPTIONS = ("max-partition-movements", "max-replica-movements", "max-leader-movements", "max-broker-movements")
"""Any of these turns --execute into the batched executor."""


# ---- the deprecated --zookeeper path (kreassign.zookeeper)
ZOOKEEPER_PERMITTED_ARGS: dict[str, tuple[str, ...]] = {
    "verify": ("zookeeper", "preserve-throttles"),
    "generate": ("zookeeper", "broker-list", "disable-rack-aware", "seed"),
    "execute": ("zookeeper", "throttle"),
}

# Options and actions that need --bootstrap-server: Kafka 2.8's list, the newer Apache options, and
# kreassign's batched executor. Names the spec may not know yet are fine: argv rejects unknown options
# before it looks at this list.
ZOOKEEPER_FORBIDDEN_OPTIONS = (
    "additional",
    "cancel",
    "command-config",
    "replica-alter-log-dirs-throttle",
    "list",
    "timeout",
    "bootstrap-controller",
    "disallow-replication-factor-change",
    "progress",
    "max-partition-movements",
    "max-replica-movements",
    "max-leader-movements",
    "max-broker-movements",
    "order",
    "adaptive",
    "dry-run",
    "sample-rates",
    "allow-slow-moves",
    "broker-capacity",
    "broker-capacity-file",
    "max-utilisation",
    "output",
    "journal-file",
    "poll-interval-ms",
    "stall-timeout-ms",
    "fail-if-incomplete",
    "watch",
)

SNAPSHOT_ACTION = "write-cluster-snapshot"
"""Not one of the Apache ACTIONS (whose usage message lists them): an action when given alone."""
SNAPSHOT_ACTION_ARGS = ("bootstrap-server", "command-config", "topics-to-move-json-file", "sample-rates")
