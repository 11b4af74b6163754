"""Source text helpers: line offsets, ast positions as text offsets, indentation."""

from __future__ import annotations

import ast
from bisect import bisect_right

__all__ = ["Source"]


class Source:
    """One file's text with its line table.

    Lines are 1-based and end after their ``\\n`` (a ``\\r\\n`` ending stays part of the
    line). Columns are characters, as libcst counts them; :meth:`ast_offset` converts an
    ast column (UTF-8 bytes) to a text offset.
    """

    __slots__ = ("_ascii", "newline", "nlines", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        if starts[-1] != len(text):
            starts.append(len(text))
        self.starts = starts
        """``starts[k]`` is the offset of line ``k + 1``; the last entry is ``len(text)``."""
        self.nlines = len(starts) - 1
        first_end = text.find("\n")
        self.newline = "\r\n" if first_end > 0 and text[first_end - 1] == "\r" else "\n"
        self._ascii: dict[int, bool] = {}

    def line_start(self, line: int) -> int:
        """Offset of the first character of ``line`` (``len(text)`` past the end)."""
        return self.starts[min(max(line, 1), self.nlines + 1) - 1]

    def line_end(self, line: int) -> int:
        """Offset just after ``line`` (after its newline, if it has one)."""
        return self.starts[min(max(line, 0), self.nlines)]

    def line_text(self, line: int) -> str:
        """The text of ``line`` with its newline."""
        return self.text[self.line_start(line) : self.line_end(line)]

    def lines(self, first: int, last: int) -> str:
        """Lines ``first`` to ``last`` (inclusive) as one string, newlines kept."""
        return self.text[self.line_start(first) : self.line_end(last)]

    def line_of(self, offset: int) -> int:
        """The 1-based line holding ``offset`` (``nlines + 1`` at the end of a text that
        ends with a newline)."""
        if offset >= len(self.text):
            ends_open = bool(self.text) and not self.text.endswith("\n")
            return self.nlines if ends_open else self.nlines + 1
        return bisect_right(self.starts, offset)

    def offset(self, line: int, column: int) -> int:
        """Offset of (1-based ``line``, character ``column``)."""
        return self.line_start(line) + column

    def indent(self, line: int) -> str:
        """The leading spaces and tabs of ``line``."""
        text = self.line_text(line)
        stripped = text.lstrip(" \t\f")
        return text[: len(text) - len(stripped)]

    def ast_offset(self, line: int, byte_col: int) -> int:
        """Offset of an ast position (1-based line, UTF-8 byte column)."""
        start = self.line_start(line)
        ascii_line = self._ascii.get(line)
        if ascii_line is None:
            ascii_line = self.line_text(line).isascii()
            self._ascii[line] = ascii_line
        if ascii_line:
            return start + byte_col
        raw = self.line_text(line).encode("utf-8")
        return start + len(raw[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Text offsets ``[start, end)`` of an ast node with positions."""
        start = self.ast_offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end_line = node.end_lineno  # type: ignore[attr-defined]
        end_col = node.end_col_offset  # type: ignore[attr-defined]
        return start, self.ast_offset(end_line, end_col)

    def segment(self, node: ast.AST) -> str:
        """The source text of an ast node (its tokens only: no comment, no newline)."""
        start, end = self.span(node)
        return self.text[start:end]
