"""The author guide's worked example: one small figure, written the way a new chapter's would be."""
