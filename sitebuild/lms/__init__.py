"""Chapters for a learning management system: SCORM and cmi5 packages (scorm.py, cmi5.py),
each carrying only the data its chapters read (needs.py), and quiz banks (questions.py)."""
