"""A small GSS-API binding over the system's Kerberos runtime (MIT's ``libgssapi_krb5.so.2``), through ctypes.

Nothing is compiled: the library that most Linux hosts already have (Debian/Ubuntu ``libgssapi-krb5-2``,
RHEL/Fedora ``krb5-libs``) is loaded at run time by :func:`load_gssapi_library`, the one place that finds it
(``KREASSIGN_GSSAPI_LIBRARY`` names another file; an executable that carries the library sets it). Only what a
Kafka SASL/GSSAPI client needs is bound: credentials from a keytab or a ticket cache
(``gss_acquire_cred_from``, MIT's credential store extension), a security context with a broker
(``gss_init_sec_context``), and ``gss_wrap``/``gss_unwrap`` for the last SASL message. Errors carry
``gss_display_status``'s text (``Client not found in Kerberos database``, ``Key table entry not found`` ...).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Mapping
from typing import Any

from kreassign.errors import ConfigError

LIBRARY_NAMES = ("libgssapi_krb5.so.2", "libgssapi_krb5.so", "libgssapi_krb5.2.dylib")
LIBRARY_PACKAGES = (
    "libgssapi-krb5-2 (Debian, Ubuntu), krb5-libs (RHEL, Fedora, Amazon Linux), krb5 (Alpine, Arch), "
    "or krb5 from Homebrew (macOS)"
)

OM_uint32 = ctypes.c_uint32
GSS_S_COMPLETE = 0
GSS_S_CONTINUE_NEEDED = 1
GSS_C_GSS_CODE = 1
GSS_C_MECH_CODE = 2
GSS_C_INITIATE = 1
GSS_C_MUTUAL_FLAG = 2
GSS_C_SEQUENCE_FLAG = 8
GSS_C_CONF_FLAG = 16
GSS_C_INTEG_FLAG = 32
GSS_C_INDEFINITE = 0xFFFFFFFF


class _Buffer(ctypes.Structure):
    _fields_ = [("length", ctypes.c_size_t), ("value", ctypes.c_void_p)]


class _KeyValue(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class _KeyValueSet(ctypes.Structure):
    _fields_ = [("count", OM_uint32), ("elements", ctypes.POINTER(_KeyValue))]


class GssError(Exception):
    """A GSS-API failure, with the library's own text."""


_LOCK = threading.Lock()
_LIBRARY: Any = None


def load_gssapi_library() -> Any:
    """The GSS-API runtime, loaded once: ``KREASSIGN_GSSAPI_LIBRARY`` if set, else the system's library.
    A host without it gets one line naming the package that provides it."""
    global _LIBRARY
    with _LOCK:
        if _LIBRARY is not None:
            return _LIBRARY
        names = [os.environ["KREASSIGN_GSSAPI_LIBRARY"]] if os.environ.get("KREASSIGN_GSSAPI_LIBRARY") else []
        names += list(LIBRARY_NAMES)
        for name in names:
            try:
                lib = ctypes.CDLL(name)
            except OSError:
                continue
            _declare(lib)
            _LIBRARY = lib
            return lib
    raise ConfigError(
        "sasl.mechanism GSSAPI needs the system's Kerberos GSS-API library (libgssapi_krb5.so.2), which this host "
        f"does not have: install {LIBRARY_PACKAGES}"
    )


def _declare(lib: Any) -> None:
    p = ctypes.POINTER
    vp = ctypes.c_void_p
    signatures = {
        "gss_import_name": [p(OM_uint32), p(_Buffer), vp, p(vp)],
        "gss_acquire_cred_from": [
            p(OM_uint32),
            vp,
            OM_uint32,
            vp,
            ctypes.c_int,
            p(_KeyValueSet),
            p(vp),
            p(vp),
            p(OM_uint32),
        ],
        "gss_init_sec_context": [
            p(OM_uint32),
            vp,
            p(vp),
            vp,
            vp,
            OM_uint32,
            OM_uint32,
            vp,
            p(_Buffer),
            p(vp),
            p(_Buffer),
            p(OM_uint32),
            p(OM_uint32),
        ],
        "gss_wrap": [p(OM_uint32), vp, ctypes.c_int, OM_uint32, p(_Buffer), p(ctypes.c_int), p(_Buffer)],
        "gss_unwrap": [p(OM_uint32), vp, p(_Buffer), p(_Buffer), p(ctypes.c_int), p(OM_uint32)],
        "gss_display_status": [p(OM_uint32), OM_uint32, ctypes.c_int, vp, p(OM_uint32), p(_Buffer)],
        "gss_display_name": [p(OM_uint32), vp, p(_Buffer), p(vp)],
        "gss_inquire_cred": [p(OM_uint32), vp, p(vp), p(OM_uint32), p(ctypes.c_int), p(vp)],
        "gss_release_buffer": [p(OM_uint32), p(_Buffer)],
        "gss_release_name": [p(OM_uint32), p(vp)],
        "gss_release_cred": [p(OM_uint32), p(vp)],
        "gss_delete_sec_context": [p(OM_uint32), p(vp), p(_Buffer)],
    }
    for name, arguments in signatures.items():
        function = getattr(lib, name)
        function.argtypes = arguments
        function.restype = OM_uint32


def _oid(lib: Any, symbol: str) -> ctypes.c_void_p:
    return ctypes.c_void_p.in_dll(lib, symbol)


def _failed(major: int) -> bool:
    return (major & 0xFFFF0000) != 0


def _status_text(lib: Any, major: int, minor: int) -> str:
    """Every line of ``gss_display_status`` for the major then the minor (mechanism) status."""
    lines: list[str] = []
    for status, kind in ((major, GSS_C_GSS_CODE), (minor, GSS_C_MECH_CODE)):
        if kind == GSS_C_MECH_CODE and not status:
            continue
        context = OM_uint32(0)
        while True:
            out_minor = OM_uint32()
            text = _Buffer()
            result = lib.gss_display_status(
                ctypes.byref(out_minor), status, kind, None, ctypes.byref(context), ctypes.byref(text)
            )
            if _failed(result):
                break
            lines.append(ctypes.string_at(text.value, text.length).decode("utf-8", errors="replace"))
            lib.gss_release_buffer(ctypes.byref(out_minor), ctypes.byref(text))
            if context.value == 0:
                break
    noise = ("Unspecified GSS failure.  Minor code may provide more information", "Success")
    return ": ".join(line for line in lines if line and line not in noise)


def _check(lib: Any, major: int, minor: ctypes.c_uint32, what: str) -> None:
    if _failed(major):
        raise GssError(f"{what}: {_status_text(lib, major, minor.value)}")


def _buffer(data: bytes) -> tuple[_Buffer, Any]:
    raw = ctypes.create_string_buffer(data, len(data))
    return _Buffer(len(data), ctypes.cast(raw, ctypes.c_void_p)), raw


def _take(lib: Any, buffer: _Buffer) -> bytes:
    data = ctypes.string_at(buffer.value, buffer.length) if buffer.length else b""
    minor = OM_uint32()
    lib.gss_release_buffer(ctypes.byref(minor), ctypes.byref(buffer))
    return data


class GssName:
    def __init__(self, text: str, kind: str) -> None:
        """``kind``: ``principal`` (``user/instance@REALM``) or ``service`` (``service@host``)."""
        self.lib = load_gssapi_library()
        symbol = "GSS_KRB5_NT_PRINCIPAL_NAME" if kind == "principal" else "GSS_C_NT_HOSTBASED_SERVICE"
        buffer, keep = _buffer(text.encode())
        self.handle = ctypes.c_void_p()
        minor = OM_uint32()
        major = self.lib.gss_import_name(
            ctypes.byref(minor), ctypes.byref(buffer), _oid(self.lib, symbol), ctypes.byref(self.handle)
        )
        del keep
        _check(self.lib, major, minor, f"the Kerberos name {text}")

    def __del__(self) -> None:
        if getattr(self, "handle", None) and self.handle.value:
            self.lib.gss_release_name(ctypes.byref(OM_uint32()), ctypes.byref(self.handle))


class GssCredentials:
    """Initiator credentials from a credential store (``client_keytab``, ``ccache`` ... as MIT names them)."""

    def __init__(self, principal: str | None, store: Mapping[str, str]) -> None:
        self.lib = load_gssapi_library()
        self.name = GssName(principal, "principal") if principal else None
        elements = (_KeyValue * len(store))(*[_KeyValue(k.encode(), v.encode()) for k, v in store.items()])
        store_set = _KeyValueSet(len(store), elements)
        self.handle = ctypes.c_void_p()
        minor = OM_uint32()
        lifetime = OM_uint32()
        major = self.lib.gss_acquire_cred_from(
            ctypes.byref(minor),
            self.name.handle if self.name else None,
            GSS_C_INDEFINITE,
            None,
            GSS_C_INITIATE,
            ctypes.byref(store_set),
            ctypes.byref(self.handle),
            None,
            ctypes.byref(lifetime),
        )
        _check(self.lib, major, minor, "Kerberos credentials")
        self.lifetime_s = lifetime.value

    def principal(self) -> str:
        """The name the credentials are for (``gss_inquire_cred``): reading it makes MIT get the ticket-granting
        ticket from a keytab, so a wrong keytab or an unknown principal fails here."""
        name = ctypes.c_void_p()
        minor = OM_uint32()
        lifetime = OM_uint32()
        major = self.lib.gss_inquire_cred(
            ctypes.byref(minor), self.handle, ctypes.byref(name), ctypes.byref(lifetime), None, None
        )
        _check(self.lib, major, minor, "Kerberos credentials")
        try:
            text = _Buffer()
            major = self.lib.gss_display_name(ctypes.byref(minor), name, ctypes.byref(text), None)
            _check(self.lib, major, minor, "Kerberos credentials")
            return _take(self.lib, text).decode("utf-8", errors="replace")
        finally:
            self.lib.gss_release_name(ctypes.byref(OM_uint32()), ctypes.byref(name))

    def __del__(self) -> None:
        if getattr(self, "handle", None) and self.handle.value:
            self.lib.gss_release_cred(ctypes.byref(OM_uint32()), ctypes.byref(self.handle))


class GssContext:
    """An initiator security context with a target service (``service@host``)."""

    FLAGS = GSS_C_MUTUAL_FLAG | GSS_C_SEQUENCE_FLAG | GSS_C_CONF_FLAG | GSS_C_INTEG_FLAG

    def __init__(self, credentials: GssCredentials, target: str) -> None:
        self.lib = load_gssapi_library()
        self.credentials = credentials
        self.target = GssName(target, "service")
        self.handle = ctypes.c_void_p()
        self.complete = False

    def step(self, token: bytes | None) -> bytes:
        minor = OM_uint32()
        out = _Buffer()
        flags = OM_uint32()
        given, keep = _buffer(token) if token else (None, None)
        major = self.lib.gss_init_sec_context(
            ctypes.byref(minor),
            self.credentials.handle,
            ctypes.byref(self.handle),
            self.target.handle,
            _oid(self.lib, "gss_mech_krb5"),
            self.FLAGS,
            0,
            None,
            ctypes.byref(given) if given is not None else None,
            None,
            ctypes.byref(out),
            ctypes.byref(flags),
            None,
        )
        del keep
        data = _take(self.lib, out)
        _check(self.lib, major, minor, "the Kerberos security context")
        self.complete = major == GSS_S_COMPLETE
        return data

    def wrap(self, message: bytes) -> bytes:
        minor = OM_uint32()
        given, keep = _buffer(message)
        out = _Buffer()
        major = self.lib.gss_wrap(ctypes.byref(minor), self.handle, 0, 0, ctypes.byref(given), None, ctypes.byref(out))
        del keep
        data = _take(self.lib, out)
        _check(self.lib, major, minor, "gss_wrap")
        return data

    def unwrap(self, message: bytes) -> bytes:
        minor = OM_uint32()
        given, keep = _buffer(message)
        out = _Buffer()
        major = self.lib.gss_unwrap(
            ctypes.byref(minor), self.handle, ctypes.byref(given), ctypes.byref(out), None, None
        )
        del keep
        data = _take(self.lib, out)
        _check(self.lib, major, minor, "gss_unwrap")
        return data

    def __del__(self) -> None:
        if getattr(self, "handle", None) and self.handle.value:
            self.lib.gss_delete_sec_context(ctypes.byref(OM_uint32()), ctypes.byref(self.handle), None)
