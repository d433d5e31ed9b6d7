"""A GGUF file's header and tensors, read with the stdlib and numpy: the one reader of GGUF
files, for the build's repack of SmolLM2's file (sitebuild/models/smollm2.py) and for the
exporter (toymodels/export/llama.py). Not the PyPI package gguf, whose own dependencies
(requests, pyyaml, tqdm) the site tier would otherwise carry for these sixty lines; numpy and
the stdlib alone, so the browser's Python can read a GGUF file too. tests/test_smollm2_build.py
reads a small made file with it; tests/test_smollm2_live.py holds the repack of SmolLM2's file
to what gguf's reader gives.

GGUF (version 2 or 3, little-endian): "GGUF", the version (u32), the tensor count and the
key-value count (u64 each); each key-value pair (a string, a value type u32, a value); each
tensor's name, dimension count (u32), dimensions (u64 each, the fastest axis first), block type
(u32) and offset (u64); then, from the next multiple of general.alignment (default 32), the
tensors' data, each at its offset. A string is a u64 length and UTF-8 bytes; an array is an
item type (u32), a count (u64) and the items.
"""

import struct

import numpy as np

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?"}
SCALARS.update({10: "<Q", 11: "<q", 12: "<d"})
STRING, ARRAY = 8, 9
BLOCK_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0"}
BLOCK_TYPES.update({12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 30: "BF16"})


class GGUFError(ValueError):
    """The bytes are not a GGUF file this reader knows."""


class Reader:
    """The GGUF file in `data` (bytes): .fields {key: value} (arrays as lists) and .tensors
    {name: (block type, shape (rows, cols) or (n,), uint8 array of its bytes)}, where the bytes
    are views of `data`, sized by `nbytes(block type, shape)`."""

    def __init__(self, data, nbytes):
        self.buf, self.at = memoryview(data), 0
        if bytes(self.buf[:4]) != b"GGUF":
            raise GGUFError("not a GGUF file: it does not start with 'GGUF'")
        self.at = 4
        version, n_tensors, n_fields = self._read("<I"), self._read("<Q"), self._read("<Q")
        if version not in (2, 3):
            raise GGUFError(f"GGUF version {version}; this reader knows versions 2 and 3")
        self.fields = {}
        for _ in range(n_fields):
            key = self._string()
            self.fields[key] = self._value(self._read("<I"))
        infos = []
        for _ in range(n_tensors):
            name, n_dims = self._string(), self._read("<I")
            dims = [self._read("<Q") for _ in range(n_dims)]
            kind, offset = self._read("<I"), self._read("<Q")
            infos.append((name, BLOCK_TYPES.get(kind, f"type {kind}"), dims, offset))
        align = int(self.fields.get("general.alignment", 32))
        start = self.at + (-self.at % align)
        body = np.frombuffer(self.buf, np.uint8)
        self.tensors = {}
        for name, kind, dims, offset in infos:
            shape = tuple(reversed(dims))  # rows first
            end = start + offset + nbytes(kind, shape)
            if end > len(body):
                raise GGUFError(f"tensor {name} ends at byte {end}, past the file's end")
            self.tensors[name] = (kind, shape, body[start + offset : end])

    def _read(self, fmt):
        (value,) = struct.unpack_from(fmt, self.buf, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def _string(self):
        n = self._read("<Q")
        text = str(self.buf[self.at : self.at + n], "utf-8")
        self.at += n
        return text

    def _value(self, kind):
        if kind == STRING:
            return self._string()
        if kind == ARRAY:
            item, n = self._read("<I"), self._read("<Q")
            return [self._value(item) for _ in range(n)]
        if kind not in SCALARS:
            raise GGUFError(f"value type {kind} at byte {self.at} is not one GGUF defines")
        return self._read(SCALARS[kind])
