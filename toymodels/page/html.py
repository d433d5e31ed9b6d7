"""HTML for figures, from plain Python values, shared by the build and the browser.

Everything a reader typed passes through `esc` before it reaches markup, so
a sentence such as <img src=x onerror=...> is shown as the characters it is.
The markup carries no inline style or script: colours are classes, and the
page's JavaScript only wires up elements marked with data-key / data-fk.
"""

import functools
import re
from html import escape

import numpy as np


def esc(value):
    """Text -> HTML text or attribute value."""
    text = str(value)
    # most values (keys, numbers, words) have nothing to escape: a figure escapes hundreds a tap
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return escape(text, quote=True)
    return text


MATRIX_NAME = re.compile(r"\bW_([QKVO])\b")


def symbols(text):
    """Text -> HTML text, with a weight matrix's name written as the chapters' maths writes it:
    "Q = X · W_Q" -> "Q = X · W<sup>Q</sup>". (Code keeps W_Q, which the chapters say once.)"""
    return MATRIX_NAME.sub(r"W<sup>\1</sup>", esc(text))


def spoken(text):
    """Text for a screen reader or a title: "W_Q" -> "W-Q", as the chapters say it is read."""
    return MATRIX_NAME.sub(r"W-\1", str(text))


@functools.cache
def _attribute(name):
    """class_ -> class, data_key -> data-key"""
    return name.rstrip("_").replace("_", "-")


def attrs(**kw):
    """Keyword arguments -> ' name="value"' pairs; None and False drop out, True stands alone."""
    out = []
    for name, value in kw.items():
        name = _attribute(name)
        if value is None or value is False:
            continue
        out.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    return "".join(out)


def state_button(key, value, text, on, *, fk=None, cls=None, **extra):
    """A toggle button that sets state[key] = value. The pressed one is the tab stop of its
    data-roving group; arrow keys reach the others."""
    markup = attrs(
        class_=cls,
        data_key=key,
        data_value=value,
        data_fk=fk or f"{key}-{value}",
        aria_pressed=str(on).lower(),
        tabindex="0" if on else "-1",
        **extra,
    )
    return f'<button type="button"{markup}>{esc(text)}</button>'


NUMBER_WORDS = (
    "no",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)


def count_words(n, noun=None, *, plural=None, start=False, among=()):
    """A count as prose writes it, the one place where the site turns counts into words.

    3 -> 'three', 0 -> 'no'; from 13 up digits, with thousands separators ('1,024').
    NOUN adds the noun in the right number: count_words(1, "head") -> 'one head',
    count_words(20, "head") -> '20 heads', count_words(0, "head") -> 'no heads'; PLURAL names
    an irregular plural (count_words(2, "matrix", plural="matrices")).
    AMONG holds the other counts of the same sentence: if any of them is written in digits, so
    is this one, so a sentence never reads '20, of which ten'.
    START capitalises the first letter, for a count that opens a sentence ('Three heads').
    """
    digits = any(m >= len(NUMBER_WORDS) for m in (n, *among))
    text = f"{n:,}" if digits or n >= len(NUMBER_WORDS) else NUMBER_WORDS[n]
    if noun is not None:
        text += " " + plural_of(n, noun, plural)
    return capital(text) if start else text


def plural_of(n, noun, plural=None):
    """The noun in the number that N asks for: (1, 'head') -> 'head', (2, 'head') -> 'heads'."""
    return noun if n == 1 else (plural or noun + "s")


def capital(text):
    """The text with its first letter in upper case, to open a sentence."""
    return text[:1].upper() + text[1:]


def head_name(layer, head):
    """A head's name from its 1-based layer and head: (3, 10) -> 'L3 H10' (with a no-break
    space, so the name never splits across lines). The site writes every head so, never '3.10',
    which reads as a decimal."""
    return f"L{layer}\u00a0H{head}"


def level(p, levels=9):
    """A share in [0, 1] -> colour class l0 … l9 (l0 is exactly zero)."""
    return "l0" if p <= 0 else f"l{min(levels, 1 + int(p * levels))}"


def levels(shares, n=9):
    """`level` for a whole array at once: shares -> the numbers 0 … 9 of their colour classes."""
    shares = np.asarray(shares)
    return np.where(shares > 0, np.minimum(n, 1 + (shares * n).astype(int)), 0)


def whole(text, most):
    """'12' -> 12; anything but 1 to MOST plain ASCII digits (even '²', which isdigit() accepts)
    -> None. A URL may hold anything, so state fields pass through here before int()."""
    return int(text) if re.fullmatch(f"[0-9]{{1,{most}}}", str(text)) else None


def pct(tenths):
    """Tenths of a point -> '12.5%'."""
    return f"{tenths // 10}.{tenths % 10}%"


def num(x, places=2):
    """A number as the page shows it, with a real minus sign."""
    text = f"{x:.{places}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "−")


def quoted(text):
    """Text in curly quotes, as the prose quotes a word: 'it' -> '“it”'. Plain text: escape it
    where it goes into markup."""
    return f"“{text}”"


def tenths(p):
    """Percentages of a distribution in tenths of a point, each the nearest to its share of the
    whole (halves up): one sixth is 167 (16.7%), whatever its neighbours.

    Rounded one by one, a row's shown shares may add up to a tenth or two more or less than
    1000, so a table states its total apart, the sum of the exact shares (kit.shares_table);
    bending the shares to add up (largest remainder) showed a sixth as 16.6% beside 16.7%.
    """
    raw = np.asarray(p, dtype=float)
    return np.floor(raw / raw.sum() * 1000 + 0.5).astype(int)


def tenths_rows(p):
    """`tenths` of every row of a causal head's T×T shares at once: row i over its first i + 1
    entries (the words it can see) -> T lists of ints. A few numpy calls for the whole map, not
    a dozen per row: under Pyodide each numpy call costs microseconds, and a map has T rows."""
    p = np.asarray(p, dtype=float)
    T = len(p)
    seen = np.tri(T, dtype=bool)
    raw = np.where(seen, p, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = raw / raw.sum(axis=1, keepdims=True) * 1000
    if not np.isfinite(raw[seen]).all():  # a reader's broken softmax: row by row, as tenths does
        return [tenths(p[i, : i + 1]).tolist() for i in range(T)]
    out = np.floor(raw + 0.5).astype(int)
    return [out[i, : i + 1].tolist() for i in range(T)]
