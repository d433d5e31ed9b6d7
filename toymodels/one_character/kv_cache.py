"""The square and the cache: attention scores grow as n(n+1)/2, the KV cache as
2 · layers · d_model per token.

A model that writes one token at a time keeps every earlier token's key and value in
every layer (the KV cache), so a new token only needs its own query against them:
about n dot products per head instead of all n(n+1)/2 again. The calculator below
turns layers, d_model, bytes per number and tokens into that cache's size.
"""

from ..many_heads.sizes import GPT2_SMALL, GPT3
from ..models.charmodel import model as charmodel
from ..page import kit
from ..page.figure import merge, result
from ..page.html import esc
from ..split_attend import param_count
from . import lab as char_lab

CHAR_CONTEXT = char_lab.MAX_CHARS  # the character model is trained on stretches of this length
UNITS = ((10**15, "PB"), (10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "kB"))
BITS = {"1": "8-bit (1 byte)", "2": "16-bit (2 bytes)", "4": "32-bit (4 bytes)"}
LIMITS = {"layers": 1000, "d_model": 100_000, "heads": 1000, "tokens": 1_000_000}
FIELDS = ("layers", "d_model", "heads", "tokens", "bytes")


def numbers_per_token(n_layer, d_model):
    """Numbers cached per token: a key and a value (2) of d_model numbers in each layer."""
    return 2 * n_layer * d_model


def cache_bytes(n_layer, d_model, bytes_per_number, tokens):
    """Bytes of the whole KV cache for `tokens` tokens."""
    return numbers_per_token(n_layer, d_model) * bytes_per_number * tokens


def scores_per_head(n):
    """Attention scores one head computes for n tokens: each scores itself and every one before
    it."""
    return n * (n + 1) // 2


def dot_products_new_token(n, cached=True):
    """Dot products one head needs for the n-th token: with the cache, its query against the
    n − 1 cached keys and its own (n); without it, every score of all n tokens again."""
    return n if cached else scores_per_head(n)


def human_bytes(b):
    """Bytes in decimal units, one decimal place: 4718592 -> '4.7 MB' (1 kB = 10³ bytes)."""
    for size, unit in UNITS:
        if b >= size:
            return f"{b / size:,.1f} {unit}"
    return f"{b:,} bytes"


def _preset(size, tokens, nbytes):
    """A model's size -> the calculator's fields, as strings."""
    return {
        "layers": str(size["n_layer"]),
        "d_model": str(size["d_model"]),
        "heads": str(size["n_head"]),
        "tokens": str(tokens),
        "bytes": str(nbytes),
    }


PRESETS = {
    "this": (_preset(charmodel.REFERENCE, CHAR_CONTEXT, 4), "This chapter's model"),
    "gpt2": (_preset(GPT2_SMALL, GPT2_SMALL["context"], 2), "GPT-2 small"),
    "gpt3": (_preset(GPT3, GPT3["context"], 2), "GPT-3"),
}
DEFAULTS = {**PRESETS["this"][0], "preset": ""}
CHOICES = {"preset": tuple(PRESETS), "bytes": tuple(BITS)}


def _check(state):
    """Reader's strings -> ints, or ValueError with a reason a reader can act on."""
    try:
        numbers = {key: int(state[key]) for key in FIELDS}
    except ValueError:
        raise ValueError("every field must be a whole number, such as 12 or 2048") from None
    for key, top in LIMITS.items():
        if not 1 <= numbers[key] <= top:
            raise ValueError(f"{key.replace('_', ' ')} must be between 1 and {top:,}")
    if str(numbers["bytes"]) not in BITS:
        raise ValueError("a number takes 1, 2 or 4 bytes here")
    # raises if the heads cannot split d_model
    param_count.attention_params(numbers["d_model"], numbers["heads"])
    return numbers


def _form(state, fid):
    fid = esc(fid)

    def field(key, fk, label, top):
        return (
            f'<label for="{fid}-{fk}">{label}</label><input type="number" min="1" max="{top}" '
            f'id="{fid}-{fk}" name="{key}" data-fk="{fk}" value="{esc(state[key])}">'
        )

    options = "".join(
        f'<option value="{key}"{" selected" if state["bytes"] == key else ""}>{esc(text)}</option>'
        for key, text in BITS.items()
    )
    presets = [(key, text) for key, (_, text) in PRESETS.items()]
    now = next(
        (key for key, (f, _) in PRESETS.items() if all(state[k] == f[k] for k in FIELDS)), None
    )
    return (
        kit.choices("preset", presets, now, label="Presets")
        + '<form class="mh-sentence kv-form" data-state-form="live">'
        + field("layers", "l", "layers", LIMITS["layers"])
        + field("d_model", "d", "d_model", LIMITS["d_model"])
        + field("heads", "h", "heads", LIMITS["heads"])
        + field("tokens", "n", "tokens n", LIMITS["tokens"])
        + f'<label for="{fid}-b">numbers stored as</label>'
        f'<select id="{fid}-b" name="bytes" data-fk="b">{options}</select>'
        '<button type="submit" data-fk="go">Compute</button></form>'
    )


def render(state=None, fid="kv-cache"):
    """The calculator: layers, d_model, heads, tokens and bytes per number in; cache size and
    score counts out."""
    state = merge(DEFAULTS, state, strip=True)
    if state["preset"] in PRESETS:
        state.update(PRESETS[state["preset"]][0])
    state["preset"] = ""
    form = _form(state, fid)
    try:
        numbers = _check(state)
    except ValueError as err:
        why = f'<p class="mh-why" role="status">This cannot work: {esc(err)}.</p>'
        return result(form + why, state, summary=f"This cannot work: {err}.")
    L, d, h, n, b = (numbers[key] for key in FIELDS)  # layers, d_model, heads, tokens, bytes
    per_token = numbers_per_token(L, d)
    total = cache_bytes(L, d, b, n)
    scores = scores_per_head(n)
    with_cache, without = dot_products_new_token(n), dot_products_new_token(n, cached=False)
    rows = (
        ("numbers per token", f"2 × {L:,} × {d:,}", f"{per_token:,}"),
        (
            "bytes per token",
            f"{per_token:,} × {b}",
            f"{per_token * b:,} ({human_bytes(per_token * b)})",
        ),
        (
            f"cache for {n:,} tokens",
            f"{per_token * b:,} × {n:,}",
            f"{total:,} ({human_bytes(total)})",
        ),
        ("scores per head", f"{n:,} × {n + 1:,} / 2", f"{scores:,}"),
        (
            f"dot products per head for token {n:,}, with the cache",
            f"{n - 1:,} cached keys + its own",
            f"{with_cache:,}",
        ),
        ("… without the cache", "all scores again", f"{without:,}"),
    )
    body = "".join(
        f'<tr><th scope="row">{what}</th><td>{how}</td><td>{count}</td></tr>'
        for what, how, count in rows
    )
    header = "".join(f'<th scope="col">{name}</th>' for name in ("what", "how", "how many"))
    html = (
        form
        + f'<p class="mh-out" role="status">The cache holds <strong>{human_bytes(total)}</strong> '
        f"for {n:,} tokens: {per_token:,} numbers per token (a key and a value of {d:,} numbers "
        f"in each of {L:,} layers), {human_bytes(per_token * b)} (1 GB = 10⁹ bytes). "
        f"Each of the {h:,} heads in a layer scores {scores:,} pairs; "
        f"with the cache, token {n:,} needs {with_cache:,} dot products per head "
        f"instead of {without:,}.</p>"
        f'<table class="mh-matrix"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'
    )
    summary = (
        f"A KV cache of {total:,} bytes ({human_bytes(total)}) for {n:,} tokens, "
        f"{per_token:,} numbers per token; {scores:,} scores per head, and {with_cache:,} "
        f"dot products per head for token {n:,} with the cache instead of {without:,} without."
    )
    return result(html, state, summary=summary)
