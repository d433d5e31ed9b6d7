"""What a module keeps of the last few things a reader asked for (the texts run through a
model, checkpoints, forward passes, drawings): a dict that holds at most N entries and, to
take a new one, forgets the one used longest ago. A reader going back to a text or a model
just left is answered from it; memory stays bounded however long the visit."""

from collections import OrderedDict


class Recent(OrderedDict):
    """At most N entries; `keep` and `put` make an entry the newest, and the oldest ones go."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def keep(self, key, make):
        """self[KEY], made by MAKE() and put if it is not there; the entry becomes the newest."""
        if key not in self:
            return self.put(key, make())
        self.move_to_end(key)
        return self[key]

    def put(self, key, value):
        """VALUE under KEY (in place of what was there) as the newest entry; -> VALUE."""
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.n:
            self.popitem(last=False)
        return value
