"""Build the root file system of packaging/Dockerfile without docker, then run its entry point in it (chroot):
the test of the container image on a machine with no docker engine. Needs root (chroot, mount) and debootstrap.

    scripts/build-executable --out dist     # the bundle tarball in dist/, as scripts/release leaves it
    .venv/bin/python packaging/image_rootfs.py --run=--version --run="--bootstrap-server 127.0.0.1:9092 --list"

``FROM debian:SUITE-slim`` is Debian's minimal base of that suite (``debootstrap --variant=minbase``, kept as a
tarball in --base-cache: the slim image is that, less documentation and locales). The other instructions are
carried out as docker does: ARG (its default, or --build-arg NAME=VALUE), ADD of a local .tar.gz (unpacked),
RUN (``/bin/sh -c`` in the chroot, the ARGs and ENVs in its environment), ENV, VOLUME (the folder is made),
USER, WORKDIR, ENTRYPOINT and CMD (exec form). Each --run is then ``ENTRYPOINT ARGS`` (CMD when ARGS is empty)
as USER, with ENV, HOME from the image's /etc/passwd, docker's default PATH, in WORKDIR, /proc mounted; its
exit code, stdout and stderr are printed. The chroot shares the host's network: a local Kafka on 127.0.0.1 is
reachable, as with ``docker run --network host``. Exit 0 when every --run exited 0 (--allow-exit N for others).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SUPPORTED = {"FROM", "ARG", "ADD", "COPY", "RUN", "ENV", "VOLUME", "USER", "WORKDIR", "ENTRYPOINT", "CMD"}


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments dropped, continuation lines joined."""
    text = re.sub(
        r"\\\n",
        " ",
        "\n".join(
            line for line in dockerfile.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")
        ),
    )
    found = []
    for line in text.splitlines():
        if line.strip():
            name, _, rest = line.strip().partition(" ")
            if name.upper() not in SUPPORTED:
                raise SystemExit(f"image-rootfs: {name} is not an instruction this builder knows")
            found.append((name.upper(), rest.strip()))
    return found


def expand(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values.get(m.group(1) or m.group(2), ""), text)


def base_rootfs(image: str, cache: Path, into: Path) -> None:
    """debian:SUITE-slim as Debian's minbase of SUITE, debootstrapped once into a cached tarball."""
    match = re.fullmatch(r"debian:(\w+)-slim", image)
    if not match:
        raise SystemExit(f"image-rootfs: FROM {image}: only debian:SUITE-slim bases are built here")
    suite = match.group(1)
    tarball = cache / f"debian-{suite}-minbase.tar"
    if not tarball.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as work:
            subprocess.run(
                ["debootstrap", "--variant=minbase", suite, work, "http://deb.debian.org/debian"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            subprocess.run(["tar", "-cf", str(tarball), "-C", work, "."], check=True)
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(into)], check=True)


class Image:
    """The state docker keeps while it builds: arguments, environment, user, folder, entry point."""

    def __init__(self, rootfs: Path, context: Path, build_args: dict[str, str], cache: Path) -> None:
        self.rootfs, self.context, self.build_args, self.cache = rootfs, context, build_args, cache
        self.args: dict[str, str] = {}
        self.env: dict[str, str] = {}
        self.user, self.workdir = "0:0", "/"
        self.entrypoint: list[str] = []
        self.cmd: list[str] = []

    def apply(self, name: str, rest: str) -> None:
        values = {**self.args, **self.env}
        if name == "FROM":
            base_rootfs(rest.split()[0], self.cache, self.rootfs)
        elif name == "ARG":
            key, _, default = rest.partition("=")
            self.args[key] = self.build_args.get(key, default)
        elif name in ("ADD", "COPY"):
            source, dest = (expand(part, values) for part in shlex.split(rest))
            target = self.rootfs / dest.lstrip("/")
            if name == "ADD" and re.search(r"\.tar(\.gz)?$", source):
                with tarfile.open(self.context / source) as tar:
                    tar.extractall(target, filter="tar")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.context / source, target)
        elif name == "RUN":
            env = {"PATH": DEFAULT_PATH, **self.args, **self.env}
            subprocess.run(["chroot", str(self.rootfs), "/bin/sh", "-c", rest], env=env, check=True)
        elif name == "ENV":
            key, _, value = rest.partition("=")
            self.env[key] = expand(value, values)
        elif name == "VOLUME":
            for folder in json.loads(rest):
                (self.rootfs / folder.lstrip("/")).mkdir(parents=True, exist_ok=True)
        elif name == "USER":
            self.user = rest if ":" in rest else f"{rest}:{rest}"
        elif name == "WORKDIR":
            self.workdir = rest
        elif name == "ENTRYPOINT":
            self.entrypoint = json.loads(rest)
        elif name == "CMD":
            self.cmd = json.loads(rest)

    def home(self) -> str:
        uid = self.user.split(":")[0]
        for line in (self.rootfs / "etc/passwd").read_text(encoding="utf-8").splitlines():
            fields = line.split(":")
            if uid in (fields[0], fields[2]):
                return fields[5]
        return "/"

    def run(self, args: list[str]) -> subprocess.CompletedProcess:
        """``docker run IMAGE ARGS``: the entry point with ARGS (or CMD), as the image's user."""
        env = [f"{k}={v}" for k, v in {"PATH": DEFAULT_PATH, "HOME": self.home(), **self.env}.items()]
        command = [*self.entrypoint, *(args or self.cmd)]
        inner = ["/usr/bin/env", "-i", *env, "/bin/sh", "-c", 'cd "$0" && exec "$@"', self.workdir, *command]
        return subprocess.run(
            ["chroot", f"--userspec={self.user}", str(self.rootfs), *inner],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dockerfile", type=Path, default=ROOT / "packaging" / "Dockerfile")
    parser.add_argument("--context", type=Path, default=ROOT, help="the build context (default: the checkout)")
    parser.add_argument("--build-arg", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--base-cache", type=Path, default=ROOT / ".cache" / "rootfs")
    parser.add_argument("--rootfs", type=Path, help="build here and keep it (default: a temporary folder)")
    parser.add_argument("--run", action="append", default=[], metavar="ARGS", help="docker run IMAGE ARGS")
    parser.add_argument("--allow-exit", type=int, action="append", default=[0], metavar="N")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("image-rootfs: needs root (chroot and mount)")
    build_args = dict(arg.partition("=")[::2] for arg in args.build_arg)
    with tempfile.TemporaryDirectory(prefix="kreassign-rootfs-") as work:
        rootfs = args.rootfs or Path(work) / "rootfs"
        image = Image(rootfs, args.context.resolve(), build_args, args.base_cache.resolve())
        for name, rest in instructions(args.dockerfile):
            image.apply(name, rest)
        (rootfs / "proc").mkdir(exist_ok=True)
        subprocess.run(["mount", "-t", "proc", "proc", str(rootfs / "proc")], check=True)
        failed = 0
        try:
            for run in args.run or [""]:
                done = image.run(shlex.split(run))
                print(f"$ docker run IMAGE {run}\n{done.stdout}{done.stderr}exit {done.returncode}", flush=True)
                failed += done.returncode not in args.allow_exit
        finally:
            subprocess.run(["umount", "-l", str(rootfs / "proc")], check=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
