"""The pieces of build.py, one subpackage per job: pipeline/ (chapters to site/), authoring/
(`new`, `check` and what stops the build at an author's line), lms/ (SCORM and cmi5 packages,
quiz banks), serving/ (`serve` and the loopback server the tests and bench share), fetched/
(pinned downloads and Python compiled ahead) and models/ (the real models' recipes)."""
