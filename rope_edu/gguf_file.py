"""A GGUF file's layout, read from its header (:func:`scan`): every metadata key with its value,
and every tensor's name, shape, type and where its bytes lie.

``gguf.GGUFReader`` builds every element of every metadata array as it opens a file: about five
seconds for SmolLM2's tokenizer (49,152 tokens and 48,900 merges) on one core, each time the file is
opened. This walks the same layout (GGUF versions 2 and 3; the value-type codes of ``gguf``'s
``GGUFValueType``) and reads the scalars, the strings and the short numeric arrays only, skipping the
long arrays by their lengths; the tensors' bytes are left in the file, for the reader to map
(:func:`rope_edu.trained.read_gguf` de-quantises them with ``gguf.quants``). Needs nothing but the
standard library.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["GGUF_MAGIC", "STRING", "ARRAY", "TensorInfo", "GGUFLayout", "SkippedArray", "scan"]

GGUF_MAGIC = b"GGUF"
#: GGUF value-type codes (``gguf.GGUFValueType``) -> struct format of a scalar.
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
#: The value-type codes of a string and of an array.
STRING, ARRAY = 8, 9
#: Numeric arrays up to this length are read (per-layer head counts); longer ones are skipped.
SHORT_ARRAY = 4096
#: Where tensor data starts is a multiple of this, unless ``general.alignment`` says otherwise.
DEFAULT_ALIGNMENT = 32


class SkippedArray:
    """A metadata array the scan skipped (a tokenizer's vocabulary): its element type and length."""

    def __init__(self, kind: int, length: int) -> None:
        self.kind, self.length = kind, length

    def __repr__(self) -> str:
        return f"<array of {self.length}>"


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry in the header.

    Attributes
    ----------
    name : str
    shape : tuple of int
        In numpy's row-major order (GGUF lists the fastest axis first; this is that list reversed).
    ggml_type : int
        ``gguf.GGMLQuantizationType`` code (0 F32, 1 F16, 3 Q4_1, 8 Q8_0, ...).
    offset : int
        Byte offset of its data from the start of the file.
    """

    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int


@dataclass(frozen=True)
class GGUFLayout:
    """What :func:`scan` read: ``fields`` (key -> value; a long array as a :class:`SkippedArray`)
    and ``tensors`` (in the file's order)."""

    fields: dict[str, Any]
    tensors: tuple[TensorInfo, ...]


def scan(path: Any) -> GGUFLayout:
    """Read a GGUF file's header: its metadata and its tensors' entries, not their data.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.gguf`` file.

    Returns
    -------
    GGUFLayout

    Raises
    ------
    TypeError
        ``path`` is not a str or Path.
    ValueError
        The file is not GGUF (version 2 or 3), or its header is cut short or damaged.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path to a .gguf file, got {type(path).__name__}")
    path = Path(path)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != GGUF_MAGIC:
            raise ValueError(f"{path}: not a GGUF file (it does not start with the bytes 'GGUF')")
        order = "<" if struct.unpack_from("<I", buf, 4)[0] & 0xFFFF else ">"
        version = struct.unpack_from(order + "I", buf, 4)[0]
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version}; this reader reads versions 2 and 3")
        at = 8

        def take(fmt: str) -> Any:
            nonlocal at
            value = struct.unpack_from(order + fmt, buf, at)[0]
            at += struct.calcsize(fmt)
            return value

        def text() -> str:
            nonlocal at
            n = take("Q")
            if at + n > len(buf):
                raise ValueError("a string runs past the end of the file")
            at += n
            return bytes(buf[at - n:at]).decode("utf-8", "replace")

        def value(kind: int) -> Any:
            nonlocal at
            if kind in SCALARS:
                return take(SCALARS[kind])
            if kind == STRING:
                return text()
            if kind != ARRAY:
                raise ValueError(f"unknown value type {kind}")
            inner, n = take("I"), take("Q")
            if inner in SCALARS and n <= SHORT_ARRAY:
                return [take(SCALARS[inner]) for _ in range(n)]
            if inner in SCALARS:
                at += n * struct.calcsize(SCALARS[inner])
            elif inner == STRING:
                for _ in range(n):
                    at += 8 + struct.unpack_from(order + "Q", buf, at)[0]
            else:
                raise ValueError(f"unreadable array of type {inner}")
            if at > len(buf):
                raise ValueError("an array runs past the end of the file")
            return SkippedArray(inner, n)

        try:
            n_tensors, n_keys = take("Q"), take("Q")
            fields = {}
            for _ in range(n_keys):
                key = text()
                fields[key] = value(take("I"))
            entries = []
            for _ in range(n_tensors):
                name = text()
                dims = [take("Q") for _ in range(take("I"))]
                entries.append((name, tuple(reversed(dims)), take("I"), take("Q")))
        except (struct.error, ValueError, OverflowError) as err:
            raise ValueError(f"{path}: not a readable GGUF file (its metadata is cut short or damaged: {err})") from None
        alignment = fields.get("general.alignment", DEFAULT_ALIGNMENT)
        if not isinstance(alignment, int) or alignment <= 0:
            raise ValueError(f"{path}: general.alignment must be a positive integer, got {alignment!r}")
        start = -(-at // alignment) * alignment
    tensors = tuple(TensorInfo(name, shape, kind, start + offset) for name, shape, kind, offset in entries)
    return GGUFLayout(fields, tensors)
