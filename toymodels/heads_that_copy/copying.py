"""Figure "Pull the copying heads out": SmolLM2 reads random tokens said twice; on the second
copy, its top guess for the next token, right or wrong, with chosen heads pulled out.

Every guess was computed at export time by the model's forward pass with those heads' outputs
zeroed (toymodels/export/smollm2.py); this figure only reads the stored runs, so it offers the
sets of heads the export ran: any of the five strongest induction heads, the five strongest
previous-token heads, both groups, and five heads drawn at random.

State: out (the id of a stored run: "none", "i10000" …, "previous", "previous+induction",
"control"), text (which repeated run), pos (a position of the second copy: the guess made
after reading that token).
"""

from ..page import kit
from ..page.html import attrs, capital, esc, head_name, whole
from . import heads as hc

DEFAULTS = {"out": "none", "text": "repeat1", "pos": ""}
PRESETS = (
    ("none", "Nothing"),
    ("previous", "Five previous-token heads"),
    ("previous+induction", "Both groups"),
    ("control", "Five random heads"),
)
CHOICES = {
    "out": tuple(c["id"] for c in hc.conditions()),
    "text": tuple(t["id"] for t in hc.runs()),
}
WORD_FIELD = "pos"


def _name(at):
    return head_name(at[0] + 1, at[1] + 1)


def induction_heads():
    """The five induction heads the export pulled out, strongest first, 0-based."""
    return [tuple(h) for h in hc.index()["copying"]["induction_heads"]]


def toggled(condition, at):
    """The id of the stored run with head AT added to or taken from CONDITION's induction heads
    (from a run of other heads, it starts from none)."""
    now = {tuple(h) for h in condition["heads"]}
    ind = induction_heads()
    now = now if now <= set(ind) else set()
    now ^= {at}
    return hc.condition(sorted(now))["id"]


def normalise(state):
    """-> kit.Normalised, with .entry: the repeated run's ids and guesses (no maps)."""
    state = kit.merge(DEFAULTS, state, choices=CHOICES)
    entry = hc.entry(state["text"])  # its ids and guesses: no maps
    i = whole(state["pos"], 3)
    if i is None or i not in hc.guessed(entry) or str(i) != state["pos"]:
        state["pos"] = str(default_pos(entry))
    return kit.Normalised(state, entry=entry)


def default_pos(entry):
    """The first position of the second copy that the model gets right with nothing pulled out
    and wrong without the strongest induction head; else the middle of the copy."""
    where = hc.guessed(entry)
    base = hc.hits(entry, _condition("none")["top1"][entry["id"]])
    out = hc.hits(entry, hc.condition([induction_heads()[0]])["top1"][entry["id"]])
    return next(
        (i for i, b, o in zip(where, base, out, strict=True) if b and not o), where[len(where) // 2]
    )


def _condition(cid):
    return next(c for c in hc.conditions() if c["id"] == cid)


def _out_line(condition):
    heads = [tuple(h) for h in condition["heads"]]
    if not heads:
        return "nothing pulled out"
    return "without " + ", ".join(_name(h) for h in heads)


def render(state=None, fid="copy-out"):
    read = normalise(state)
    state, entry = read.state, read.entry
    condition = _condition(state["out"])
    P, pieces = entry["period"], entry["pieces"]
    top1 = condition["top1"][entry["id"]]
    p_next = condition["p_next"][entry["id"]]
    base = _condition("none")
    pos = int(state["pos"])
    right, total = hc.accuracy(condition["heads"])
    here = hc.hits(entry, top1)
    # the controls: a switch per induction head, and the other stored sets
    current = {tuple(h) for h in condition["heads"]}
    switches = "".join(
        _switch(
            f"{_name(at)} (induction {100 * float(hc.scores()['induction'][at]):.0f}%)",
            toggled(condition, at),
            at in current,
            f"ind-{n}",
        )
        for n, at in enumerate(induction_heads())
    )
    others = kit.choices("out", PRESETS, state["out"], label="Pull out a set of heads", fk=_fk)
    texts = [(t["id"], f"Run {n + 1} (seed {t['seed']})") for n, t in enumerate(hc.runs())]
    controls = kit.controls(
        kit.choices("text", texts, state["text"], label="Random tokens"),
        '<div class="hc-out"><span aria-hidden="true">Pull out:</span>'
        f'<div class="mh-pick" role="group" aria-label="Pull out induction heads" data-roving>'
        f"{switches}</div></div>",
        others,
    )
    # the second copy, a button per guess
    boxes = []
    where = hc.guessed(entry)
    for k, i in enumerate(where):
        ok = here[k]
        guess = hc.word(top1[i])
        said = f", after {hc.spoken(pieces[i])}: guess {hc.spoken(guess)}, " + (
            "right" if ok else "wrong"
        )
        button = attrs(
            class_="mh-word " + ("is-right" if ok else "is-wrong"),
            data_key="pos",
            data_value=str(i),
            data_fk=f"p{i}",
            aria_pressed=str(i == pos).lower(),
            tabindex="0" if i == pos else "-1",
        )
        mark = "✓" if ok else "✗"
        boxes.append(
            f'<button type="button"{button}><span>{esc(hc.shown(pieces[i + 1]))}</span>'
            f'<span class="guess" aria-hidden="true">{mark} {esc(hc.shown(guess))}</span>'
            f'<span class="sr">{esc(said)}</span></button>'
        )
    copy = (
        '<div class="hc-copy" role="group" aria-label="The second copy: each box is the token that '
        "comes next and, under it, the model's top guess for it\" data-roving>"
        f"{''.join(boxes)}</div>"
    )
    # the chosen position, in words
    i = pos
    ok = here[where.index(i)]
    nxt, guess = hc.spoken(pieces[i + 1]), hc.spoken(hc.word(top1[i]))
    line = (
        f"After {hc.spoken(pieces[i])} (token {i + 1}), the next token is {nxt}, "
        f"last seen {P} tokens back. The model's top guess, {_out_line(condition)}: "
        f"{guess}, {'right' if ok else 'wrong'}. It gives {nxt} "
        f"{p_next[i] / 10:.1f}%"
        + (
            f" (with nothing pulled out: {base['p_next'][entry['id']][i] / 10:.1f}%)."
            if condition is not base
            else "."
        )
    )
    acc = (
        f'<p class="hc-acc">Right on the second copy, {esc(_out_line(condition))}: '
        f"<strong>{right} of {total}</strong> over all {len(hc.runs())} runs "
        f"({sum(here)} of {len(here)} in this one).</p>"
    )
    html = controls + acc + copy + f'<p class="hc-note">{esc(line)}</p>' + _runs_table(state["out"])
    summary = (
        f"{capital(_out_line(condition))}: the model's top guess is right {right} of {total} "
        f"times on the second copy. {line}"
    )
    return kit.result(html, state, summary=summary)


def _fk(value):
    return "out-" + value.replace("+", "-")


def _switch(text, value, on, fk):
    markup = attrs(
        data_key="out",
        data_value=value,
        data_fk=fk,
        aria_pressed=str(on).lower(),
        tabindex="0" if fk == "ind-0" else "-1",
    )
    return f'<button type="button"{markup}>{esc(text)}</button>'


def _runs_table(current):
    """A few of the stored runs side by side: right guesses on the second copy, out of all."""
    ind = induction_heads()
    rows = [
        ("none", "Nothing"),
        (hc.condition([ind[0]])["id"], f"{_name(ind[0])} alone"),
        (hc.condition(ind)["id"], "All five induction heads"),
        ("previous", "Five previous-token heads"),
        ("previous+induction", "Both groups"),
        ("control", "Five random heads"),
    ]
    body = []
    for cid, label in rows:
        right, total = hc.accuracy(_condition(cid)["heads"])
        sel = attrs(class_="sel" if cid == current else None)
        body.append(
            f'<tr{sel}><th scope="row">{esc(label)}</th><td>{right} of {total}</td>'
            f'<td class="bar-cell">{kit.bar(right / total)}</td></tr>'
        )
    return (
        f'<table class="mh-matrix hc-runs"><caption>Right guesses on the second copy, all '
        f"{len(hc.runs())} runs, with heads pulled out</caption>"
        '<thead><tr><th scope="col">Pulled out</th><th scope="col">Right</th><td></td></tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table>"
    )
