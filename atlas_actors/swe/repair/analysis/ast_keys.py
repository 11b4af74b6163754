"""Normalised keys: a hash of a file's AST that ignores formatting, comments and parentheses.

The key is a Merkle hash over statements. A statement's digest hashes its type, its own
fields (expressions, names, constants: serialised without positions) and, for compound
statements, the digests of the statements in each of its bodies; the module's digest is
the key. Two texts get the same key exactly when their ASTs (without positions) are
equal, and an edit inside one statement re-hashes only that statement and its ancestors,
so keying a candidate costs a parse of the edited statement, not of the file.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from hashlib import blake2b

__all__ = ["DNode", "DigestTree", "header_of", "normalised_key", "stmt_digest"]

BODY_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_CONTAINERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _serialise_value(value: object, out: list[str]) -> None:
    if isinstance(value, ast.AST):
        _serialise(value, out)
    elif isinstance(value, list):
        out.append("[")
        for item in value:
            _serialise_value(item, out)
        out.append("]")
    else:
        out.append(repr(value))


def _serialise(node: ast.AST, out: list[str]) -> None:
    out.append(type(node).__name__)
    for name in node._fields:
        _serialise_value(getattr(node, name, None), out)


def _is_body(node: ast.AST, name: str, value: object) -> bool:
    return name in BODY_FIELDS and isinstance(value, list) and isinstance(node, _CONTAINERS)


def header_of(node: ast.AST) -> bytes:
    """A node's own fields serialised, its statement bodies left out."""
    out: list[str] = [type(node).__name__]
    for name in node._fields:
        value = getattr(node, name, None)
        if not _is_body(node, name, value):
            out.append(name)
            _serialise_value(value, out)
    return "\x00".join(out).encode("utf-8", "surrogatepass")


def _combine(header: bytes, bodies: Sequence[tuple[str, Sequence[bytes]]]) -> bytes:
    h = blake2b(header, digest_size=16)
    for name, digests in bodies:
        h.update(b"\x01" + name.encode())
        h.update(b"".join(digests))
    return h.digest()


def _bodies(node: ast.AST) -> list[tuple[str, list[ast.AST]]]:
    return [
        (name, value)
        for name in node._fields
        if _is_body(node, name, value := getattr(node, name, None)) and isinstance(value, list)
    ]


def stmt_digest(node: ast.AST) -> bytes:
    """The digest of a statement (or except handler, match case) and everything in it."""
    return _combine(
        header_of(node),
        [(name, [stmt_digest(child) for child in children]) for name, children in _bodies(node)],
    )


class DNode:
    """A statement container of the original file with its cached digests."""

    __slots__ = ("bodies", "digest", "field", "header", "index", "node", "parent")

    def __init__(self, node: ast.AST, parent: DNode | None, field: str, index: int) -> None:
        self.node = node
        self.parent = parent
        self.field = field
        self.index = index
        self.header = b"Module" if isinstance(node, ast.Module) else header_of(node)
        self.bodies: list[tuple[str, list[bytes]]] = []
        self.digest = b""

    def replaced(self, field: str, start: int, stop: int, digests: Sequence[bytes]) -> bytes:
        """The module digest after ``self.<field>[start:stop]`` becomes ``digests``."""
        bodies = [
            (name, [*ds[:start], *digests, *ds[stop:]] if name == field else ds)
            for name, ds in self.bodies
        ]
        return self._propagate(_combine(self.header, bodies))

    def reheaded(self, header: bytes) -> bytes:
        """The module digest after this node's own fields serialise to ``header``."""
        return self._propagate(_combine(header, self.bodies))

    def _propagate(self, digest: bytes) -> bytes:
        node = self
        while node.parent is not None:
            parent = node.parent
            bodies = [
                (name, [*ds[: node.index], digest, *ds[node.index + 1 :]])
                if name == node.field
                else (name, ds)
                for name, ds in parent.bodies
            ]
            digest = _combine(parent.header, bodies)
            node = parent
        return digest


class DigestTree:
    """Digests of every statement container of one parsed file, by ``id`` of its ast node."""

    def __init__(self, tree: ast.Module) -> None:
        self.by_id: dict[int, DNode] = {}
        self.root = self._build(tree, None, "", 0)

    def _build(self, node: ast.AST, parent: DNode | None, field: str, index: int) -> DNode:
        dnode = DNode(node, parent, field, index)
        self.by_id[id(node)] = dnode
        for name, children in (
            _bodies(node) if not isinstance(node, ast.Module) else [("body", list(node.body))]
        ):
            digests = []
            for k, child in enumerate(children):
                if _bodies(child):
                    digests.append(self._build(child, dnode, name, k).digest)
                else:
                    digests.append(stmt_digest(child))
            dnode.bodies.append((name, digests))
        dnode.digest = _combine(dnode.header, dnode.bodies)
        return dnode

    def node(self, ast_node: ast.AST) -> DNode:
        """The container built for ``ast_node`` (a compound statement, handler, case)."""
        return self.by_id[id(ast_node)]

    @property
    def key(self) -> str:
        """The file's normalised key."""
        return self.root.digest.hex()


def normalised_key(text: str) -> str:
    """The normalised key of a Python source text (raises ``SyntaxError`` if it does not
    parse). Equal keys mean equal ASTs once positions are dropped."""
    return DigestTree(ast.parse(text)).key
