"""The curated pairs of "What a head does" (build-only data): two texts that differ in one
word, the model's next token after each, and the two candidate tokens it chooses between.

Each pair is (id, family, clean, corrupt, a, b): a is the answer the clean text calls for,
b the one the corrupted text does; the measured quantity is logit[a] - logit[b] at the last
position. The exporter (patching.py) keeps only the pairs where the model's difference
actually moves between the two texts (`keep`), and the two texts must be the same number of
tokens, so that every position of one has its counterpart in the other.

    pronoun  Winograd-style: "it" (or "he") resolved by one adjective ("too tired" / "too
             wide"), then asked which noun that pronoun was
    gender   two names and "she" / "he": to whom the pronoun's owner gave something
    ioi      indirect object: "When Mary and John went ..., John gave a drink to" Mary;
             the corrupted text repeats the other name, so the answer swaps
    repeat   a full name, then its first name again: the surname should be copied
             (the corrupted text has another surname)
"""

ASK = ' In this sentence, "{}" refers to the'  # the sentence's own pronoun

# (sentence with {} for the word, clean word, corrupted word, noun the clean one means,
# noun the corrupted one means)
WINOGRAD = (
    ("The animal didn't cross the street because it was too {}.", "tired", "wide"),
    ("The man couldn't lift his son because he was so {}.", "weak", "heavy"),
    ("The cup fell off the table because it was too {}.", "full", "small"),
    ("The dog chased the cat because it was {}.", "hungry", "scared"),
    ("The fish ate the worm because it was {}.", "hungry", "tasty"),
    ("The truck hit the bridge because it was too {}.", "tall", "low"),
    ("The bottle didn't fit in the box because it was too {}.", "tall", "small"),
    ("The ball broke the window because it was {}.", "heavy", "thin"),
    ("The table won't fit through the door because it is too {}.", "wide", "narrow"),
    ("The horse jumped over the fence because it was {}.", "strong", "low"),
    ("The mouse hid from the cat because it was {}.", "afraid", "hungry"),
    ("The student asked the professor for help because he was {}.", "confused", "wise"),
    ("The bird could not reach the nest because it was too {}.", "weak", "high"),
    ("The rock sank in the lake because it was {}.", "heavy", "deep"),
    ("The sun melted the snow because it was {}.", "hot", "soft"),
    ("The book didn't fit on the shelf because it was too {}.", "thick", "short"),
    ("The bag didn't fit in the car because it was too {}.", "large", "full"),
    ("The boat hit the rock because it was too {}.", "fast", "big"),
    ("The child couldn't carry the box because it was too {}.", "young", "heavy"),
    ("The cat couldn't catch the bird because it was too {}.", "slow", "quick"),
)
# the noun each sentence's two words point to: the first or the second of the sentence
NOUNS = (
    ("animal", "street"),
    ("man", "son"),
    ("cup", "table"),
    ("dog", "cat"),
    ("fish", "worm"),
    ("truck", "bridge"),
    ("bottle", "box"),
    ("ball", "window"),
    ("table", "door"),
    ("horse", "fence"),
    ("mouse", "cat"),
    ("student", "professor"),
    ("bird", "nest"),
    ("rock", "lake"),
    ("sun", "snow"),
    ("book", "shelf"),
    ("bag", "car"),
    ("boat", "rock"),
    ("child", "box"),
    ("cat", "bird"),
)

# {A} and {B}: a woman's and a man's name (both orders are used); the pronoun says who gives
GENDER = (
    "{A} and {B} went to the park. Then {p} gave a flower to",
    "{A} met {B} at the station. Later, {p} sent a letter to",
    "{A} and {B} sat at the table. Then {p} passed the salt to",
    "{A} called {B} on the phone, and {p} said hello to",
    "{A} and {B} were cooking dinner, and {p} handed a knife to",
    "{A} saw {B} in the garden. Smiling, {p} waved at",
    "{A} wrote to {B} every week. One day {p} sent a gift to",
    "{A} and {B} went to the beach, where {p} threw the ball to",
)
COUPLES = (
    ("Mary", "John"),
    ("Anna", "Tom"),
    ("Sarah", "David"),
    ("Emma", "James"),
    ("Lisa", "Mark"),
    ("Kate", "Paul"),
    ("Jane", "Peter"),
    ("Susan", "Mike"),
)

# {A} and {B} are named, then {S} (one of them again) gives to the other
IOI = (
    ("When {A} and {B} went to the store, {S} gave a drink to", "Mary", "John"),
    ("When {A} and {B} went to the park, {S} gave a ball to", "Tom", "Anna"),
    ("After {A} and {B} had lunch, {S} handed the bill to", "Sarah", "David"),
    ("Then, {A} and {B} were working at the school. {S} decided to give a pen to", "James", "Emma"),
    ("While {A} and {B} were at the party, {S} passed a plate to", "Lisa", "Mark"),
    ("{A} and {B} went to the library. {S} gave a book to", "Paul", "Kate"),
    ("When {A} and {B} arrived at the house, {S} showed the garden to", "Alice", "Peter"),
    ("{A} and {B} had a long day at work. Afterwards, {S} said goodbye to", "Steve", "Jane"),
    ("The friends {A} and {B} found a cat. {S} gave it to", "Laura", "George"),
    ("When {A} and {B} got home, {S} threw the keys to", "Mike", "Helen"),
    ("At the cafe, {A} and {B} ordered tea. {S} offered a cookie to", "Susan", "Bob"),
    ("Yesterday {A} and {B} went fishing. {S} lent a rod to", "Tom", "Mary"),
)

# a full name, the first name again: the surname (clean) against another (corrupted)
REPEAT = (
    (
        "{F} {S} walked to the village to post a letter. On the way home, {F}",
        "Harry",
        "Potter",
        "Smith",
    ),
    (
        "{F} {S} was a famous painter. Many years later, people still admired {F}",
        "Claude",
        "Monet",
        "Turner",
    ),
    (
        "Yesterday {F} {S} gave a talk at the school. The students listened to {F}",
        "Anna",
        "Clarke",
        "Fisher",
    ),
    (
        "{F} {S} opened a bakery on Main Street. Everyone in town loves {F}",
        "Tom",
        "Baker",
        "Walker",
    ),
    ("My neighbour is {F} {S}. Last night I had dinner with {F}", "Peter", "Hughes", "Morgan"),
    (
        "The new teacher, {F} {S}, arrived on Monday. On Friday the class thanked {F}",
        "Sarah",
        "Jones",
        "Brown",
    ),
    ("{F} {S} won the race in record time. The crowd cheered for {F}", "Lucy", "Grant", "Evans"),
    ("The letter was signed by {F} {S}. I wrote back to {F}", "James", "Wilson", "Taylor"),
    (
        "{F} {S} lives in a small house by the sea. Every summer I visit {F}",
        "Emma",
        "Stone",
        "Reed",
    ),
    ("The report was written by {F} {S}. The editor called {F}", "David", "Green", "Hall"),
)


def pronoun(sentence):
    """The pronoun a Winograd sentence resolves: the word after "because"."""
    return sentence.split(" because ")[1].split()[0]


def candidates():
    """Every curated pair, kept or not: [(id, family, clean, corrupt, a, b)], a and b the
    candidate next tokens as text (each a space and a word)."""
    out = []
    for n, ((s, w1, w2), (n1, n2)) in enumerate(zip(WINOGRAD, NOUNS, strict=True), 1):
        ask = ASK.format(pronoun(s))
        out.append((f"pronoun{n}", "pronoun", s.format(w1) + ask, s.format(w2) + ask, n1, n2))
    n = 0
    for t, (woman, man) in zip(GENDER, COUPLES, strict=True):  # one couple a sentence
        for A, B in ((woman, man), (man, woman)):  # both orders: the model favours one
            n += 1
            clean, corrupt = t.format(A=A, B=B, p="she"), t.format(A=A, B=B, p="he")
            out.append((f"gender{n}", "gender", clean, corrupt, man, woman))
    for n, (t, A, B) in enumerate(IOI, 1):
        out.append((f"ioi{n}", "ioi", t.format(A=A, B=B, S=B), t.format(A=A, B=B, S=A), A, B))
    for n, (t, F, S1, S2) in enumerate(REPEAT, 1):
        out.append((f"repeat{n}", "repeat", t.format(F=F, S=S1), t.format(F=F, S=S2), S1, S2))
    return [(i, f, c, k, " " + a, " " + b) for i, f, c, k, a, b in out]


FLIP_MIN = 1.0  # a sign flip counts when the difference moves by at least this (logits)
MOVE_MIN = 2.0  # without a flip, the difference must move at least this, the right way


def keep(ld_clean, ld_corrupt):
    """Whether a pair is kept, and why not: the model's difference flips sign (clean for a,
    corrupted for b) and moves at least FLIP_MIN, or moves the right way by MOVE_MIN.
    Otherwise patching would divide by a change too small to read."""
    move = ld_clean - ld_corrupt
    if ld_clean > 0 > ld_corrupt and move >= FLIP_MIN:
        return True, "flips"
    if move >= MOVE_MIN:
        return True, "moves"
    if move <= 0:
        return False, "moves the wrong way"
    return False, "moves too little"
