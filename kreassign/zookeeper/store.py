"""ZooKeeper access for the legacy path: a small protocol, and its implementation over kazoo.

kazoo is imported only by :func:`connect`, so that the CLI starts without it.
"""

from __future__ import annotations

from typing import Protocol

from kreassign.errors import ClusterError, ClusterTimeoutError

# KafkaZkClient's session and connection timeouts in Kafka 2.8's tool
CONNECTION_TIMEOUT_S = 30.0


class ZnodeStore(Protocol):
    """What the legacy actions need from ZooKeeper. Paths are absolute below the chroot."""

    def get(self, path: str) -> bytes | None:
        """The znode's data, or None when it does not exist."""

    def children(self, path: str) -> list[str]:
        """The znode's children, or an empty list when it does not exist."""

    def exists(self, path: str) -> bool: ...

    def set_or_create(self, path: str, data: bytes) -> None:
        """Set the data, creating the znode (and missing parents) when it does not exist."""

    def create(self, path: str, data: bytes, *, sequential: bool = False) -> str:
        """Create a persistent znode (parents too); raises ClusterError if it exists. Returns its path."""

    def close(self) -> None: ...


class KazooStore:
    """:class:`ZnodeStore` over a started ``kazoo.client.KazooClient``."""

    def __init__(self, client) -> None:
        self._client = client

    def get(self, path: str) -> bytes | None:
        from kazoo.exceptions import NoNodeError

        try:
            data, _ = self._client.get(path)
        except NoNodeError:
            return None
        return data

    def children(self, path: str) -> list[str]:
        from kazoo.exceptions import NoNodeError

        try:
            return list(self._client.get_children(path))
        except NoNodeError:
            return []

    def exists(self, path: str) -> bool:
        return self._client.exists(path) is not None

    def set_or_create(self, path: str, data: bytes) -> None:
        from kazoo.exceptions import NodeExistsError, NoNodeError

        try:
            self._client.set(path, data)
        except NoNodeError:
            try:
                self._client.create(path, data, makepath=True)
            except NodeExistsError:  # created in between: set it after all
                self._client.set(path, data)

    def create(self, path: str, data: bytes, *, sequential: bool = False) -> str:
        from kazoo.exceptions import NodeExistsError

        try:
            return self._client.create(path, data, sequence=sequential, makepath=True)
        except NodeExistsError as exc:
            raise ClusterError(f"KeeperErrorCode = NodeExists for {path}") from exc

    def close(self) -> None:
        self._client.stop()
        self._client.close()


def quiet_logger():
    """kazoo logs connection retries as warnings; the Apache tool keeps stderr quiet: a logger that
    drops them (pass it as ``KazooClient(logger=...)``)."""
    import logging

    logger = logging.getLogger("kreassign.zookeeper.kazoo")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
    return logger


def connect(connect_string: str, timeout: float = CONNECTION_TIMEOUT_S) -> KazooStore:
    """Connect to ``HOST:PORT[,HOST:PORT...][/chroot]`` (kazoo understands the chroot suffix)."""
    from kazoo.client import KazooClient
    from kazoo.handlers.threading import KazooTimeoutError

    try:
        client = KazooClient(hosts=connect_string, timeout=timeout, logger=quiet_logger())
    except ValueError as exc:
        raise ClusterError(f"Invalid ZooKeeper connection string: {connect_string}") from exc
    try:
        client.start(timeout=timeout)
    except KazooTimeoutError as exc:
        client.close()
        raise ClusterTimeoutError("Timed out waiting for connection while in state: CONNECTING") from exc
    return KazooStore(client)
