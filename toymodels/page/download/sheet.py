"""The numbers as CSV: one row per cell of every table, under a header naming the figure, its
state and its source; a field a spreadsheet would run as a formula is neutralised."""

import csv
import io
import unicodedata

from .reader import BOLDED, MASKED, RAISED, WORDS, value

FORMULA = ("=", "+", "-", "@", "\t", "\r")


def safe(field):
    """A CSV field a spreadsheet shows as text: one that would start a formula gets a quote,
    also after leading spaces or line breaks, and in full width (＝, which a spreadsheet in an
    East Asian locale reads as =)."""
    text = BOLDED.sub(r"\1", RAISED.sub(r"^\1", str(field)))
    first = unicodedata.normalize("NFKC", text.lstrip()[:1])
    return f"'{text}" if text.startswith(FORMULA) or first.startswith(FORMULA) else text


def state_line(state):
    return "; ".join(f"{k}={v}" for k, v in state.items())


def table_csv(tables, caption, state, source):
    """One row per cell, quoted, under three header rows: the figure, its state, its source."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    w.writerow([f"# {caption}"])
    w.writerow([f"# state: {state_line(state)}"])
    w.writerow([f"# source: {source}"])
    w.writerow(["table", "row", "column", "value", "text"])
    for t in tables:
        columns = t.columns[1:] if len(t.columns) > len(t.rows[0][1]) else t.columns
        for label, cells in t.rows:
            for i, (text, shade) in enumerate(cells):
                column = columns[i] if i < len(columns) else str(i + 1)
                number = "" if shade in (MASKED, WORDS) else value(text)
                w.writerow([safe(t.caption), safe(label), safe(column), number, safe(text)])
    return out.getvalue()
