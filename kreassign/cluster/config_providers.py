"""Config providers (KIP-297, KIP-887) as Java's ``AbstractConfig`` resolves them in ``--command-config``.

``config.providers=file,directory,env`` names providers; ``config.providers.<name>.class`` gives each one's Java
class and ``config.providers.<name>.param.<param>`` its parameters. Every value of the file may then hold
``${<provider>:[<path>:]<key>}`` placeholders, which are replaced by what the provider gives for that path
and key. As in Java: the names are split on ``,`` without trimming; a provider whose ``.class`` is not set
is ignored; a placeholder that cannot be resolved (an unknown provider, a missing key, a path outside
``allowed.paths``) is left as it is. The three providers that ship with Kafka are reproduced here:

* ``FileConfigProvider``: the path is a properties file (read as UTF-8), the key one of its properties;
* ``DirectoryConfigProvider``: the path is a folder, the key the name of a regular file in it, whose whole
  text (UTF-8) is the value;
* ``EnvVarConfigProvider``: no path, the key is an environment variable matching ``allowlist.pattern``.

``allowed.paths`` (file, directory) is a comma-separated list of absolute paths that must exist; a path
outside them is not read. Any other provider class is refused with one line naming it. What Java logs (a
placeholder left as is, a path not allowed) becomes a note for the operator: :attr:`Resolution.notes`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kreassign.cluster.java_properties import parse_java_properties
from kreassign.errors import ConfigError

CONFIG_PROVIDERS = "config.providers"
FILE_PROVIDER = "org.apache.kafka.common.config.provider.FileConfigProvider"
DIRECTORY_PROVIDER = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
ENV_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
KNOWN_PROVIDERS = (FILE_PROVIDER, DIRECTORY_PROVIDER, ENV_PROVIDER)
#: Java's ConfigTransformer.DEFAULT_PATTERN (the same backtracking in Python's re)
PLACEHOLDER = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")


@dataclass
class Resolution:
    """The properties with their placeholders replaced, the values that came from providers (with the property
    each went into), and notes on what was left as it is."""

    properties: dict[str, str]
    provided: list[tuple[str, str]] = field(default_factory=list, repr=False)
    notes: list[str] = field(default_factory=list)


def resolve_config_providers(
    properties: Mapping[str, str], environ: Mapping[str, str] | None = None, allowed_classes: str | None = None
) -> Resolution:
    """``properties`` as ``AbstractConfig`` resolves them (unchanged without ``config.providers``).
    ``allowed_classes``: Java's ``-Dorg.apache.kafka.automatic.config.providers`` (None: every class)."""
    names = properties.get(CONFIG_PROVIDERS, "")
    if not names:
        return Resolution(dict(properties))
    providers: dict[str, _Provider] = {}
    for name in names.split(","):
        class_name = properties.get(f"{CONFIG_PROVIDERS}.{name}.class")
        if class_name is None:
            continue
        if allowed_classes is not None and class_name not in {c.strip() for c in allowed_classes.split(",")}:
            raise ConfigError(
                f"{class_name} is not allowed. Update System property 'org.apache.kafka.automatic.config.providers' "
                f"to allow {class_name}"
            )
        prefix = f"{CONFIG_PROVIDERS}.{name}.param."
        params = {k[len(prefix) :]: v for k, v in properties.items() if k.startswith(prefix) and len(k) > len(prefix)}
        providers[name] = _provider(name, class_name, params, os.environ if environ is None else environ)
    if not providers:
        return Resolution(dict(properties))
    lookups: dict[tuple[str, str], dict[str, str]] = {}
    wanted: dict[tuple[str, str], set[str]] = {}
    for value in properties.values():
        for match in PLACEHOLDER.finditer(value):
            provider, path, key = match.group(1), match.group(3) or "", match.group(4)
            if provider in providers:
                wanted.setdefault((provider, path), set()).add(key)
    denied: set[tuple[str, str]] = set()  # (provider, path) outside allowed.paths
    for (provider, path), keys in wanted.items():
        lookups[(provider, path)] = providers[provider].get(path, keys)
        if path in providers[provider].denied:
            denied.add((provider, path))
    resolution = Resolution({})
    for name, value in properties.items():
        resolution.properties[name] = PLACEHOLDER.sub(
            lambda m, n=name: _replace(m, lookups, denied, n, resolution), value
        )
    return resolution


def _replace(
    match: re.Match[str],
    lookups: Mapping[tuple[str, str], dict[str, str]],
    denied: set[tuple[str, str]],
    name: str,
    out: Resolution,
) -> str:
    provider, path, key = match.group(1), match.group(3) or "", match.group(4)
    found = lookups.get((provider, path), {}).get(key) if (provider, path) in lookups else None
    if found is None:
        if (provider, path) in denied:
            why = "its path is not in allowed.paths"
        elif not any(p == provider for p, _ in lookups):
            why = "no provider of that name is configured"
        else:
            why = "not found"
        out.notes.append(f"{match.group(0)} in {name} was left as it is ({why}), as the Java client leaves it.")
        return match.group(0)
    out.provided.append((name, found))
    return found


# ------------------------------------------------------------------------------------------------ providers
class _Provider:
    denied: frozenset[str] | set[str] = frozenset()  # paths refused by allowed.paths

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        raise NotImplementedError


def _provider(name: str, class_name: str, params: Mapping[str, str], environ: Mapping[str, str]) -> _Provider:
    if class_name == FILE_PROVIDER:
        return _FileProvider(_allowed_paths(params.get("allowed.paths")))
    if class_name == DIRECTORY_PROVIDER:
        return _DirectoryProvider(_allowed_paths(params.get("allowed.paths")))
    if class_name == ENV_PROVIDER:
        return _EnvProvider(params.get("allowlist.pattern", ".*"), environ)
    error = ConfigError(
        f"Invalid value {class_name} for configuration {CONFIG_PROVIDERS}.{name}.class: "
        "Could not load config provider class or one of its dependencies"
    )
    error.add_note(
        f"kreassign runs the config providers that ship with Kafka ({', '.join(c.rsplit('.', 1)[1] for c in KNOWN_PROVIDERS)}), "
        f"not the Java class {class_name}: resolve its values into the file, or use one of those."
    )
    raise error


def _java_normalize(path: str) -> str:
    """``java.nio.file.Path.normalize`` on Unix: no ``.``, ``..`` folded lexically (never through links)."""
    absolute = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part == ".." and absolute:
            continue
        else:
            parts.append(part)
    return ("/" if absolute else "") + "/".join(parts)


def _starts_with(path: str, base: str) -> bool:
    """``Path.startsWith``: whole components."""
    return base == "/" or path == base or path.startswith(base.rstrip("/") + "/")


class _AllowedPaths:
    def __init__(self, allowed: list[str] | None) -> None:
        self.allowed = allowed
        self.denied: set[str] = set()  # the paths refused (Java logs a warning for each)

    def check(self, path: str) -> str | None:
        if self.allowed is None:
            return path
        normalized = _java_normalize(path)
        if any(_starts_with(normalized, base) for base in self.allowed):
            return normalized
        self.denied.add(path)
        return None


def _allowed_paths(value: str | None) -> _AllowedPaths:
    if not value:
        return _AllowedPaths(None)
    allowed = []
    for entry in value.split(","):
        normalized = _java_normalize(entry)
        if not normalized.startswith("/"):
            raise ConfigError(f"Path {normalized} is not absolute")
        if not os.path.exists(normalized):
            raise ConfigError(f"Path {normalized} does not exist")
        allowed.append(normalized)
    return _AllowedPaths(allowed)


class _FileProvider(_Provider):
    def __init__(self, allowed: _AllowedPaths) -> None:
        self.allowed = allowed
        self.denied = allowed.denied

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if not path:
            return {}
        checked = self.allowed.check(path)
        if checked is None:
            return {}
        try:
            text = Path(checked).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            raise ConfigError(f"Could not read properties from file {path}") from None
        properties = parse_java_properties(text)
        return {key: properties[key] for key in keys if key in properties}


class _DirectoryProvider(_Provider):
    def __init__(self, allowed: _AllowedPaths) -> None:
        self.allowed = allowed
        self.denied = allowed.denied

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if not path:
            return {}
        folder = self.allowed.check(path)
        if folder is None or not os.path.isdir(folder):
            return {}
        found = {}
        for key in keys:
            file = Path(folder) / key
            if "/" in key or not file.is_file():
                continue
            try:
                found[key] = file.read_bytes().decode("utf-8", errors="replace")
            except OSError:
                raise ConfigError(f"Could not read file {file} for property {key}") from None
        return found


class _EnvProvider(_Provider):
    def __init__(self, pattern: str, environ: Mapping[str, str]) -> None:
        try:
            allow = re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"allowlist.pattern {pattern} of EnvVarConfigProvider: {exc}") from None
        self.values = {k: v for k, v in environ.items() if allow.fullmatch(k)}

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if path:
            raise ConfigError(f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'")
        return {key: self.values[key] for key in keys if key in self.values}
