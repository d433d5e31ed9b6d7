"""Chapter "Many heads looking at once": three hand-made causal heads, their figure, and the
sizes of published models."""
