"""Why a head looks where it does, for any model the site runs: one score split into what each
earlier component wrote, drawn as two tables.

The split itself is a model's own (toymodels/why_a_head_looks/: `split.Split` for the character
model, `smollm2.Split` for SmolLM2, both `Components`): this piece needs only its
`totals(layer, head, i)`, each component's part of the score row on each side, so it works for
any model that offers one, and imports none.
"""

from ..html import num, quoted
from .tables import matrix


def score_split(split, layer, head, query, key, *, words=None, top=6):
    """Head HEAD of LAYER (0-based) from token QUERY to token KEY of SPLIT's text: each side's
    TOP components by their lift (their part of the score for KEY less their mean part over the
    keys QUERY sees: what makes KEY stand out) -> (html: two tables, summary: one sentence).
    WORDS names the tokens (default their positions)."""
    names, query_side, key_side = split.totals(layer, head, query)
    q, k = (quoted(words[n]) if words else f"token {n + 1}" for n in (query, key))
    html, said = "", []
    for side, part in (("key", key_side), ("query", query_side)):
        lift = part[:, key] - part.mean(-1)
        order = sorted(range(len(names)), key=lambda c: (-lift[c], c))[:top]
        caption = f"{side.capitalize()} side of {q} → {k}: the largest lifts"
        html += matrix(caption, [names[c] for c in order], ["Lift"], [[lift[c]] for c in order])
        said.append(f"on the {side} side by {names[order[0]]} ({num(lift[order[0]])})")
    score = float(key_side[:, key].sum())
    return html, f"The score of {q} → {k}, {num(score)}, is lifted most " + ", ".join(said) + "."
