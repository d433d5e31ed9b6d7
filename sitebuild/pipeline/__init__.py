"""The build's pipeline, chapters/*.md to site/: reading chapters (chapters.py), Markdown and
maths (markup.py), blocks (pages.py), figures and their first taps (figures.py, prerender.py),
live cells (cellrunner.py), styles and the page's policy (styles.py, policy.py), content-hashed
names (fingerprint.py), the icon, class.html's questions (classbank.py), zips (archive.py),
chapters kept from the last build (chaptercache.py) and the swap into site/ (publish.py), run
in order by build.py."""
