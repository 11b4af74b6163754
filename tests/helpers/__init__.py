"""Helpers the test modules share (importable as ``helpers``: ``tests/`` is on the
import path while pytest runs, since ``tests/conftest.py`` lives there)."""
