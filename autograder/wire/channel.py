"""The private channel between grader and child: framed records on a pipe, never stdout.

A record is a JSON header plus named NumPy arrays. Arrays travel as ``.npy`` bytes loaded with
``allow_pickle=False``, so nothing the child writes can run code in the grader's process.

Frame layout: ``b"KGR1"``, header length (u32, little-endian), header JSON; then for each name
in ``header["_arrays"]``: its length (u64) and the ``.npy`` bytes.
"""

from __future__ import annotations

import io
import json
import os
import struct

import numpy as np

MAGIC = b"KGR1"
MAX_HEADER = 16 << 20
MAX_ARRAY = 1 << 31


class ChannelError(Exception):
    """A frame on the channel is malformed (a child writing garbage, or cut off)."""


def encode(header: dict, arrays: dict[str, np.ndarray] | None = None) -> bytes:
    arrays = arrays or {}
    header = dict(header, _arrays=list(arrays))
    hb = json.dumps(header).encode()
    parts = [MAGIC, struct.pack("<I", len(hb)), hb]
    for name in arrays:
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(arrays[name]), allow_pickle=False)
        data = buf.getvalue()
        parts += [struct.pack("<Q", len(data)), data]
    return b"".join(parts)


def write_record(fd: int, header: dict, arrays: dict[str, np.ndarray] | None = None) -> None:
    """Write one record to file descriptor ``fd`` (blocking, whole frame)."""
    data = memoryview(encode(header, arrays))
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _read_exact(stream, n: int) -> bytes:
    chunks = []
    while n:
        b = stream.read(n)
        if not b:
            raise EOFError
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_record(stream) -> tuple[dict, dict[str, np.ndarray]]:
    """Read one record from a binary stream. Raises ``EOFError`` at a clean end of stream and
    :class:`ChannelError` for a malformed frame."""
    magic = stream.read(4)
    if not magic:
        raise EOFError
    try:
        if magic != MAGIC:
            raise ChannelError("bad frame marker")
        (hlen,) = struct.unpack("<I", _read_exact(stream, 4))
        if hlen > MAX_HEADER:
            raise ChannelError("header too large")
        header = json.loads(_read_exact(stream, hlen))
        if not isinstance(header, dict):
            raise ChannelError("header is not an object")
        arrays = {}
        for name in header.pop("_arrays", []):
            (alen,) = struct.unpack("<Q", _read_exact(stream, 8))
            if alen > MAX_ARRAY:
                raise ChannelError("array too large")
            arrays[str(name)] = np.load(io.BytesIO(_read_exact(stream, alen)), allow_pickle=False)
        return header, arrays
    except EOFError:
        raise ChannelError("record cut off") from None
    except (ValueError, json.JSONDecodeError, struct.error) as exc:
        raise ChannelError(f"malformed record: {exc}") from None
