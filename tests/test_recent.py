"""toymodels/page/recent.py: what a module keeps of the last things a reader asked for holds at
most N entries, makes each only once while kept, and forgets the one used longest ago."""

from toymodels.page.recent import Recent


def test_the_entry_used_longest_ago_goes_first():
    made = []
    kept = Recent(2)

    def make(key):
        made.append(key)
        return key.upper()

    assert kept.keep("a", lambda: make("a")) == "A"
    assert kept.keep("b", lambda: make("b")) == "B"
    assert kept.keep("a", lambda: make("a")) == "A"  # kept: not made again, and now the newest
    assert kept.keep("c", lambda: make("c")) == "C"  # "b", used longest ago, goes
    assert list(kept) == ["a", "c"] and made == ["a", "b", "c"]
    assert kept.keep("b", lambda: make("b")) == "B"  # made again: it had gone
    assert list(kept) == ["c", "b"] and made == ["a", "b", "c", "b"]


def test_put_replaces_and_makes_the_newest():
    kept = Recent(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.put("a", 3) == 3  # in place of the entry there, as the newest
    kept.put("c", 4)
    assert dict(kept) == {"a": 3, "c": 4} and list(kept) == ["a", "c"]
