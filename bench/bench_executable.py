"""Start-up and size of the self-contained executable, against the installed package and the Apache tool, all
measured in the same run (issue 41).

    .venv/bin/python bench/bench_executable.py [--runs 20] [--executable PATH] [--package PATH]

--executable: the one-file executable (default: this checkout's, built if the build cache has none,
packaging/build_executable.py --cache). --package: an installed package's ``kafka-reassign-partitions``
(default: a fresh venv with this checkout's wheel and its dependencies installed by pip, as an operator
installs it; the editable install of .venv would add its own import hook). The Apache tool: the pinned
release's kafka-reassign-partitions from the Maven jars.

Every command runs --runs times, the tools taking turns (so that the machine's load falls on all of them
alike), each in ``env -i`` with HOME and PATH only; the median wall time and the median CPU time (user +
system, of the process and its children) of each, and the ratios executable / package and executable /
Apache. The executable's first run (it unpacks itself) is timed separately, in fresh HOMEs. Sizes: the file,
the bundle tarball, and the unpacked folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kreassign.devcluster.jars import apache_tool_command  # noqa: E402

COMMANDS = {"--version": ["--version"], "--help": ["--help"]}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; its stdout and stderr are discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def built_executable() -> Path:
    out = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build_executable.py"), "--cache"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Path(out.strip())


def installed_package(work: Path) -> Path:
    """This checkout's wheel and its dependencies, installed by pip into a venv of their own."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "wheel"), str(ROOT)], check=True
    )
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    (wheel,) = (work / "wheel").glob("kreassign-*.whl")
    subprocess.run([str(work / "venv" / "bin" / "pip"), "install", "-q", str(wheel)], check=True)
    return work / "venv" / "bin" / "kafka-reassign-partitions"


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--first-runs", type=int, default=3)
    parser.add_argument("--executable", type=Path)
    parser.add_argument("--package", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kreassign-bench-") as tmp:
        work = Path(tmp)
        source = args.executable or built_executable()
        (work / "bin").mkdir()
        executable = work / "bin" / "kafka-reassign-partitions"
        shutil.copy2(source, executable)
        package = args.package or installed_package(work)
        tools = {
            "executable": ([str(executable)], work / "home-executable"),
            "package": ([str(package)], work / "home-package"),
            "apache": (apache_tool_command(), work / "home-apache"),
        }
        java_path = os.environ.get("PATH", "/usr/bin:/bin")  # the Apache tool needs java from the PATH

        def env(home: Path, name: str) -> dict[str, str]:
            home.mkdir(exist_ok=True)
            return {"HOME": str(home), "PATH": java_path if name == "apache" else "/usr/bin:/bin"}

        first = []
        for n in range(args.first_runs):
            first.append(timed([str(executable), "--version"], env(work / f"fresh-{n}", "executable")))
        unpacked = size(next((work / "fresh-0" / ".cache" / "kreassign").iterdir()))
        for name, (argv, home) in tools.items():  # each tool's own first run (page cache, unpacking) left out
            timed([*argv, "--version"], env(home, name))
        results: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.runs):
            for command, extra in COMMANDS.items():
                for name, (argv, home) in tools.items():
                    results.setdefault((name, command), []).append(timed([*argv, *extra], env(home, name)))

    def median(name: str, command: str, index: int) -> float:
        return statistics.median(sample[index] for sample in results[(name, command)])

    print(f"{args.runs} runs each, tools taking turns; median wall ms (CPU ms)")
    print(f"{'command':<10} {'executable':>16} {'package':>16} {'apache':>18} {'exe/package':>16} {'exe/apache':>16}")
    for command in COMMANDS:
        cells = {name: (median(name, command, 0) * 1e3, median(name, command, 1) * 1e3) for name in tools}
        ratio = {
            other: f"{cells['executable'][0] / cells[other][0]:.2f} ({cells['executable'][1] / cells[other][1]:.2f})"
            for other in ("package", "apache")
        }
        row = " ".join(f"{cells[name][0]:>9.1f} ({cells[name][1]:>5.1f})" for name in tools)
        print(f"{command:<10} {row} {ratio['package']:>16} {ratio['apache']:>16}")
    walls = sorted(f"{w:.2f}" for w, _ in first)
    print(f"first run (unpacks into a fresh HOME), {args.first_runs} times: {', '.join(walls)} s wall")
    tarball = next(source.parent.glob("kreassign-*.tar.gz"), None)
    print(
        f"sizes: executable {megabytes(source.stat().st_size)}"
        + (f", bundle tarball {megabytes(tarball.stat().st_size)}" if tarball else "")
        + f", unpacked {megabytes(unpacked)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
