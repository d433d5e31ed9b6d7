"""A GGUF file's header and tensors, read with the stdlib and numpy: the one reader of GGUF
files, for the build's repack of SmolLM2's file (sitebuild/models/smollm2.py), the exporter
(toymodels/export/llama.py) and the card of a reader's own file (card.py). Not the PyPI
package gguf, whose own dependencies (requests, pyyaml, tqdm) the site tier would otherwise
carry for this one module; numpy and the stdlib alone, so the browser's Python can read a GGUF
file too. tests/test_smollm2_build.py reads a small made file with it, tests/test_card.py
hostile headers; tests/test_smollm2_live.py holds the repack of SmolLM2's file to what gguf's
reader gives.

GGUF (version 2 or 3, little-endian): "GGUF", the version (u32), the tensor count and the
key-value count (u64 each); each key-value pair (a string, a value type u32, a value); each
tensor's name, dimension count (u32), dimensions (u64 each, the fastest axis first), block type
(u32) and offset (u64); then, from the next multiple of general.alignment (default 32), the
tensors' data, each at its offset. A string is a u64 length and UTF-8 bytes; an array is an
item type (u32), a count (u64) and the items.

`Header` reads the header and tensor infos alone, from bytes or pulling pieces from a file
object, so a reader's own file is judged (card.py) without reading its tensors. Every length
and count is checked against the bytes that could hold it before anything is read or made,
so a hostile header (a string of 2**60 bytes, 2**60 tensors) is refused at once.
"""

import struct

import numpy as np

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?"}
SCALARS.update({10: "<Q", 11: "<q", 12: "<d"})
STRING, ARRAY = 8, 9
# the block types quants.py reads, by ggml type id
BLOCK_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0"}
BLOCK_TYPES.update({12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 30: "BF16"})
# the other ids ggml defines, named so a refusal can say which type a file holds
OTHER_TYPES = {9: "Q8_1", 10: "Q2_K", 11: "Q3_K", 15: "Q8_K", 16: "IQ2_XXS", 17: "IQ2_XS"}
OTHER_TYPES.update({18: "IQ3_XXS", 19: "IQ1_S", 20: "IQ4_NL", 21: "IQ3_S", 22: "IQ2_S"})
OTHER_TYPES.update({23: "IQ4_XS", 24: "I8", 25: "I16", 26: "I32", 27: "I64", 28: "F64"})
OTHER_TYPES.update({29: "IQ1_M", 34: "TQ1_0", 35: "TQ2_0", 39: "MXFP4"})
MAX_HEADER = 256 * 2**20  # the most a header may take; no real one comes near
MAX_DIMS = 4  # ggml's
MAX_DEPTH = 3  # arrays of arrays of arrays
MAX_ITEMS = 2**22  # items in an array: more than any vocabulary (a list of them costs 8 bytes each)
PIECE = 2**20  # bytes pulled from a file object at a time
U64 = struct.Struct("<Q")


class GGUFError(ValueError):
    """The bytes are not a GGUF file this reader knows. `reason`: "not-gguf", "version",
    "truncated" (the bytes end before what the header says is there) or "corrupt"."""

    def __init__(self, message, reason="corrupt"):
        super().__init__(message)
        self.reason = reason


def type_name(kind):
    """A ggml type id's name ("Q4_K"), or "type N" for an id ggml does not define."""
    return BLOCK_TYPES.get(kind) or OTHER_TYPES.get(kind) or f"type {kind}"


class Header:
    """A GGUF file's header and tensor infos, read from `source`: bytes-like (a prefix of the
    file or all of it) or a binary file object read with .read(n) in pieces of PIECE bytes,
    as far as the tensor infos end and no further than MAX_HEADER. `file_size`, where known,
    bounds every length too. `on_field(key, value)`, if given, is called as each metadata
    field is read (a caller may refuse a file there, before the rest is read).

    .version, .fields {key: value} (arrays as lists), .tensors [(name, block type name,
    shape rows first, offset from the data's start)], .end (the byte after the tensor
    infos), .alignment, .data_start (.end rounded up to it)."""

    def __init__(self, source, file_size=None, on_field=None):
        if isinstance(source, (bytes, bytearray, memoryview, np.ndarray)):
            self.buf, self.source = memoryview(source).cast("B"), None
        else:
            self.buf, self.source = memoryview(b""), source
        self.at = 0
        self.limit = min(MAX_HEADER, file_size) if file_size is not None else MAX_HEADER
        if self.source is None:
            self.limit = min(self.limit, len(self.buf))
        self._pull(min(4, self.limit))
        if bytes(self.buf[:4]) != b"GGUF":
            raise GGUFError("not a GGUF file: it does not start with 'GGUF'", "not-gguf")
        self.at = 4
        self.version = self._read("<I")
        if self.version not in (2, 3):
            swapped = int.from_bytes(self.version.to_bytes(4, "little"), "big")
            order = " (a big-endian file)" if swapped in (2, 3) else ""
            raise GGUFError(
                f"GGUF version {self.version}{order}; this reader knows versions 2 and 3",
                "version",
            )
        n_tensors = self._read("<Q")  # checked once the fields are read: a caller may refuse
        n_fields = self._count(self._read("<Q"), 8 + 4 + 1, "metadata fields")  # a file there
        self.fields = {}
        for _ in range(n_fields):
            key = self._string()
            if key in self.fields:
                raise GGUFError(f"the metadata key {key!r} comes twice")
            self.fields[key] = self._value(self._read("<I"), 0)
            if on_field is not None:
                on_field(key, self.fields[key])
        align = self.fields.get("general.alignment", 32)
        if type(align) is not int or not 0 < align <= 2**16 or align & (align - 1):
            raise GGUFError(f"general.alignment is {align!r}, not a power of two up to 65536")
        self.alignment = align
        self.tensors, names = [], set()
        for _ in range(self._count(n_tensors, 8 + 4 + 4 + 8, "tensors")):
            name, n_dims = self._string(), self._read("<I")
            if not 1 <= n_dims <= MAX_DIMS:
                raise GGUFError(f"tensor {name!r} has {n_dims} dimensions; GGUF allows 1 to 4")
            dims = [self._read("<Q") for _ in range(n_dims)]
            if min(dims) < 1 or max(dims) > 2**40 or int(np.prod(dims, dtype=float)) > 2**44:
                raise GGUFError(f"tensor {name!r} has dimensions {dims}, which no model has")
            kind, offset = self._read("<I"), self._read("<Q")
            if offset % align or name in names:
                what = "comes twice" if name in names else f"is not at a multiple of {align}"
                raise GGUFError(f"tensor {name!r} {what}")
            names.add(name)
            self.tensors.append((name, type_name(kind), tuple(reversed(dims)), offset))
        self.end = self.at
        self.data_start = self.at + (-self.at % align)

    def _pull(self, end):
        """Make sure bytes up to `end` are in hand, or say the header runs past them."""
        if end > self.limit:
            where = "the file's end" if end <= MAX_HEADER else f"{MAX_HEADER} bytes"
            raise GGUFError(
                f"the header runs past {where}: it needs byte {end}, the bytes end at {self.limit}",
                "truncated" if end <= MAX_HEADER else "corrupt",
            )
        while len(self.buf) < end:
            piece = self.source.read(max(PIECE, end - len(self.buf)))
            if not piece:
                self.limit = len(self.buf)
                return self._pull(end)
            self.buf = memoryview(bytes(self.buf) + piece)  # a view: slices copy nothing

    def _read(self, fmt):
        size = struct.calcsize(fmt)
        self._pull(self.at + size)
        (value,) = struct.unpack_from(fmt, self.buf, self.at)
        self.at += size
        return value

    def _count(self, n, least, what):
        """A count `n` of things each at least `least` bytes long, checked against the bytes
        that could hold them before any is read: more than a header can hold is corrupt, more
        than the bytes in hand hold is a file cut short (or corrupt: no one can tell)."""
        if n * least > self.limit - self.at:
            raise GGUFError(
                f"the header says {n} {what}, more than the {self.limit - self.at} bytes "
                "left could hold",
                "truncated" if self.at + n * least <= MAX_HEADER else "corrupt",
            )
        return n

    def _string(self):
        n = self._count(self._read("<Q"), 1, "bytes of text")
        self._pull(self.at + n)
        try:
            text = str(self.buf[self.at : self.at + n], "utf-8")
        except UnicodeDecodeError:
            raise GGUFError(f"the text at byte {self.at} is not UTF-8") from None
        self.at += n
        return text

    def _strings(self, n):
        """n strings, as _string reads them, in one loop without a call each (a vocabulary
        and its merges are 300,000 of them: this makes a card twice as fast)."""
        out, at, unpack = [], self.at, U64.unpack_from
        try:
            for _ in range(n):
                if at + 8 > len(self.buf):
                    self._pull(at + 8)
                (k,) = unpack(self.buf, at)
                at += 8
                if at + k > len(self.buf):
                    self.at = at
                    self._count(k, 1, "bytes of text")
                    self._pull(at + k)
                out.append(str(self.buf[at : at + k], "utf-8"))
                at += k
        except UnicodeDecodeError:
            raise GGUFError(f"the text at byte {at} is not UTF-8") from None
        self.at = at
        return out

    def _value(self, kind, depth):
        if kind == STRING:
            return self._string()
        if kind == ARRAY:
            item = self._read("<I")
            if depth == MAX_DEPTH or not (item in SCALARS or item in (STRING, ARRAY)):
                raise GGUFError(f"an array at byte {self.at} holds items of type {item}")
            least = struct.calcsize(SCALARS[item]) if item in SCALARS else 8 + 4 * (item == ARRAY)
            n = self._count(self._read("<Q"), least, "array items")
            if n > MAX_ITEMS:
                raise GGUFError(f"an array at byte {self.at} has {n} items, more than any model's")
            if item in SCALARS:  # at once, not an item at a time
                self._pull(self.at + n * least)
                items = np.frombuffer(self.buf, SCALARS[item], n, self.at).tolist()
                self.at += n * least
                return items
            if item == STRING:
                return self._strings(n)
            return [self._value(item, depth + 1) for _ in range(n)]
        if kind not in SCALARS:
            raise GGUFError(f"value type {kind} at byte {self.at} is not one GGUF defines")
        return self._read(SCALARS[kind])


class Reader:
    """The GGUF file in `data` (bytes): .fields {key: value} (arrays as lists) and .tensors
    {name: (block type, shape (rows, cols) or (n,), uint8 array of its bytes)}, where the bytes
    are views of `data`, sized by `nbytes(block type, shape)`."""

    def __init__(self, data, nbytes):
        head = Header(data)
        self.fields = head.fields
        body = np.frombuffer(data, np.uint8)
        self.tensors = {}
        for name, kind, shape, offset in head.tensors:
            end = head.data_start + offset + nbytes(kind, shape)
            if end > len(body):
                raise GGUFError(f"tensor {name} ends at byte {end}, past the file's end")
            self.tensors[name] = (kind, shape, body[head.data_start + offset : end])
