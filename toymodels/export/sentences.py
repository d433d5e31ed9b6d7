"""The curated sentences of "Real heads", which "Heads that copy" opens with too."""

# (id, sentence): the id names the file and is what the chapter's prose refers to
SENTENCES = (
    ("cat", "The cat sat on the mat because it was tired."),
    ("puff", "Puff found a shiny key and kept it."),
    ("scientist", "The scientist thanked the engineer because she solved the problem."),
    ("animal", "The animal didn't cross the street because it was too tired."),
    (
        "fox",
        "The quick brown fox jumps over the fence, "
        "and the quick brown fox jumps over the fence again.",
    ),
    ("keys", "The keys to the old cabinet are on the kitchen table."),
    ("music", "When the music stopped, everyone in the small room turned to look at the door."),
    ("milk", "She poured the milk into the cup and drank it slowly."),
)
