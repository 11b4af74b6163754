"""The catalogue's operator families as code: what a family sees of one suspicious
statement and how it emits raw edits (``statement_view``), and the families themselves:
statement-level edits (``statements``), operators, conditions and numbers
(``expressions``), names, attributes, literals and calls (``names_calls``)."""
