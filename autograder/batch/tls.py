"""TLS credentials made for one local batch (:func:`batch_security`), kept in memory.

The key and its self-signed certificate are PEM text held by a :class:`BatchSecurity` (Dask's
:class:`distributed.security.Security`), which the batch process gives its scheduler, its
client and, pickled, its worker processes. They are never written to a file or an environment
variable: OpenSSL reads them from anonymous in-memory files (``memfd``), where Dask's own
``Security`` would write them into a temporary folder that another process of the same user
could read while it exists.
"""

from __future__ import annotations

import os
import subprocess

from distributed.security import Security

from autograder.errors import GraderSetupError


class BatchSecurity(Security):
    """:class:`distributed.security.Security` that hands in-memory keys to OpenSSL through a
    ``memfd`` (Linux; elsewhere as Dask does). Without ``__slots__`` of its own: Dask checks
    its arguments against ``self.__slots__``, which must stay the base class's."""

    def _get_tls_context(self, tls, purpose):
        cert, key = tls.get("cert"), tls.get("key")
        if not (hasattr(os, "memfd_create") and tls.get("ca_file") and cert and key
                and "\n" in cert and "\n" in key):
            return super()._get_tls_context(tls, purpose)
        fds = [_memfd(cert), _memfd(key)]
        try:
            return super()._get_tls_context(
                dict(tls, cert=f"/proc/self/fd/{fds[0]}", key=f"/proc/self/fd/{fds[1]}"),
                purpose)
        finally:
            for fd in fds:
                os.close(fd)


def _memfd(text: str) -> int:
    fd = os.memfd_create("kernelgrade-tls")  # close-on-exec: no child inherits it
    os.write(fd, text.encode())
    return fd


def self_signed() -> tuple[str, str]:
    """(certificate, private key) as PEM text: a new self-signed pair, made with the
    ``cryptography`` package when it is installed (``Security.temporary``), else by the
    ``openssl`` command, which writes them to a pipe. Raises :class:`GraderSetupError` when
    neither can."""
    try:
        made = Security.temporary()
        return made.tls_scheduler_cert, made.tls_scheduler_key
    except ImportError:
        pass
    try:
        done = subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "/dev/stdout", "-out",
             "/dev/stdout", "-subj", "/CN=dask-internal", "-days", "30",
             "-addext", "subjectAltName=DNS:dask-internal"],
            capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GraderSetupError(
            "a local batch needs TLS credentials of its own, made by the Python package "
            f"cryptography (not installed) or the openssl command ({exc}): install one of "
            "them") from None
    end_key = "-----END PRIVATE KEY-----\n"
    text = done.stdout
    if done.returncode != 0 or end_key not in text or "-----BEGIN CERTIFICATE-----" not in text:
        raise GraderSetupError("openssl could not make the batch's TLS credentials: "
                               + (done.stderr.strip() or "it printed no key and certificate"))
    key, cert = text.split(end_key, 1)
    return cert[cert.index("-----BEGIN CERTIFICATE-----"):], key + end_key


def batch_security() -> BatchSecurity:
    """New credentials for one local batch: TLS required, one self-signed certificate as the
    authority and as every role's certificate (as Dask's ``Security.temporary()``), so only a
    holder of its key can connect."""
    cert, key = self_signed()
    roles = {f"tls_{role}_{part}": value for role in ("client", "scheduler", "worker")
             for part, value in (("cert", cert), ("key", key))}
    return BatchSecurity(require_encryption=True, tls_ca_file=cert, **roles)
