"""What a chapter's author meets: `build.py new`'s skeleton (scaffold.py), the guards that stop
the build at the author's line when a chapter's code fails (blame.py), overruns its time
(limits.py), is too big (budgets.py), does what the reader's browser cannot (browser.py) or
writes markup the page would not keep (sanitizer.py), and `build.py check` (check.py), which
reports them all and times each figure in the reader's Python (drawtime.py)."""
