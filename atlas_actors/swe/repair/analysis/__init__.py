"""What the edit operators read of one file: its text and line table (``source_text``),
what its ``ast`` says about names, calls, literals and donor statements
(``file_facts``), its statements and where each sits (``statement_map``), the
normalised keys that tell two edited files apart (``ast_keys``), and a suspicious
statement parsed with libcst, with its expression sites (``cst_sites``)."""
