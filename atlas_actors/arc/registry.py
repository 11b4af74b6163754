"""Declaring DSL ops: parameter kinds, example cases and the :func:`op` decorator.

Everything about an op is declared once, on its function, in the family module that
holds it (``atlas_actors/arc/ops/<family>.py``)::

    @op(
        params=(K.COLOR, K.COLOR),
        generator=g_paint,
        cases=[Case((4, 0), "111 101 111", "111 141 111")],
    )
    def fill_enclosed(g: Grid, c: int, bg: int) -> Grid:
        ...

registers the op ``fill_enclosed`` (the function's name, unless ``name=`` says
otherwise): the kinds of its parameters after the input grid (``g``, always of kind
:attr:`Kind.GRID`), its family (the module's name), its parameter generator (a function
of a :class:`~atlas_actors.arc.infer.Ctx` yielding argument tuples, :data:`BG` for the
background colour alone; or ``no_generator=`` with the reason it has none, e.g. an op
reached only by mutation), when the generator is worth running (``when=`` flags of
:class:`When`, and ``only_if=`` tests of the state, run in order before the generator)
and its example cases (arguments after the input grid, input, expected output; grids as
rows or as compact text, :func:`grid_of`). The decorator returns the function unchanged,
so ops call each other and :meth:`~atlas_actors.arc.dsl.Program.to_python` copies their
source as plain functions.

Adding an op is one edit: write the function with its declaration in the family module
it belongs to. It joins the search after every op of :data:`~atlas_actors.arc.ops.RANK`.

:mod:`atlas_actors.arc.ops` imports the family modules and orders the declared ops
(:func:`in_order`) into :data:`~atlas_actors.arc.dsl.OPS` and the generators into
:data:`~atlas_actors.arc.ops.GENERATORS`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum, Flag, auto
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from atlas_actors.arc.infer import Ctx

Args = tuple[Any, ...]
Generator = Callable[["Ctx"], Iterator[Args]]
"""A parameter generator: the argument tuples (after the input grid) worth trying."""
Check = Callable[["Ctx"], bool]
"""A test of a search state that must pass for an op's generator to be run
(``@op(only_if=...)``)."""


@dataclass(frozen=True)
class OnSelf:
    """A check that tries the op itself: ``test(ctx, the op's function, ctx.bg)``, e.g.
    ``@op(only_if=OnSelf(fits))``: the op with the background gives every target."""

    test: Callable[[Ctx, Callable[..., Any], int], bool]


@dataclass(frozen=True)
class Fitting:
    """A generator that tries the op itself: of the argument tuples ``candidates(ctx)``
    yields, those with which ``test(ctx, the op's function, *args)`` holds (only the
    first when ``first``), e.g. ``@op(generator=Fitting(fits, lambda ctx: ((k, ctx.bg)
    for k in (8, 4)), first=True))``."""

    test: Callable[..., bool]
    candidates: Generator
    first: bool = False

    def of(self, fn: Callable[..., Any]) -> Generator:
        """The generator for the op whose function is ``fn``."""

        def run(ctx: Ctx) -> Iterator[Args]:
            for args in self.candidates(ctx):
                if self.test(ctx, fn, *args):
                    yield args
                    if self.first:
                        return

        return run


def background(ctx: Ctx) -> Iterator[Args]:
    """The generator of an op whose one parameter is the background colour."""
    yield (ctx.bg,)


BG: Generator = background
"""Short name for declarations: ``@op(generator=BG)``."""


def plain(ctx: Ctx) -> Iterator[Args]:
    """The generator of an op with no parameters after the grid: try it once."""
    yield ()


PLAIN: Generator = plain
"""Short name for declarations: ``@op(generator=PLAIN)``."""


def guarded(generator: Generator, checks: tuple[Check, ...]) -> Generator:
    """``generator``, yielding nothing unless every one of ``checks`` passes (tested in
    order when the first argument tuple is asked for)."""

    def run(ctx: Ctx) -> Iterator[Args]:
        if all(check(ctx) for check in checks):
            yield from generator(ctx)

    return run


F = TypeVar("F", bound=Callable[..., Any])


class Kind(Enum):
    """The kind of one argument of an op (its value is how the docs name it)."""

    GRID = "grid"
    """A sub-program evaluated on the input (``"x"`` is the input itself)."""
    PROGRAM = "program"
    """A sub-program the op applies to parts of the grid (``"x"`` inside is the part)."""
    COLOR = "colour"
    """0-9, or a colour role 10-13 resolved on the first grid argument
    (:func:`atlas_actors.arc.grids.role_color`)."""
    COLOR_OR_NONE = "colour or -1"
    """0-9, or -1 (the op's stated default: every colour, none, ...)."""
    FLAG = "0/1"
    NEIGHBOURHOOD = "neighbourhood"
    """0 the 4 side cells, 1 all 8, 2 the 4 diagonal ones."""
    CONN = "connectivity"
    """4 or 8."""
    COUNT = "1..30"
    RIGID = "rigid transform"
    """0-7, see :func:`atlas_actors.arc.ops.geometry.rigid`."""
    OFFSET = "-30..30"
    COLOR_MAP = "colour map"
    """``[from, to]`` colour pairs."""
    TABLE = "table"
    """``[int, colour]`` pairs."""
    RIGIDS = "rigid transforms"
    """A list of rigid transform codes."""
    COLORS = "colours"
    """A non-empty list of colours."""
    INTS = "ints"
    """A list of integers."""


K = Kind
"""Short name for declarations: ``@op(params=(K.COLOR, K.FLAG))``."""


class When(Flag):
    """Conditions on a search state (a :class:`~atlas_actors.arc.infer.Ctx`), all of
    which must hold for an op's generator to be run: ``@op(when=W.SAME_SHAPE |
    W.SHALLOW)``. The search tests them once per state for every op. Each is unchanged
    when the whole task is turned or mirrored, so a turned twin has its op's."""

    ALWAYS = 0
    SAME_SHAPE = auto()
    """Every train state has its target's shape."""
    RESHAPED = auto()
    """Some train state's shape differs from its target's."""
    SMALLER = auto()
    """Some target is smaller than its state in some dimension."""
    NOT_SMALLER = auto()
    """No target is smaller than its state in any dimension."""
    LARGER = auto()
    """Some target is larger than its state in some dimension."""
    GROWS = auto()
    """Same shapes, and cells are painted on (:attr:`Ctx.grows`)."""
    PAINTED = auto()
    """Only background cells change (:func:`~atlas_actors.arc.infer.painted_only`)."""
    CHANGED = auto()
    """At depth 0 or 1, same shapes, some cell changes
    (:func:`~atlas_actors.arc.infer.some_change`)."""
    SHALLOW = auto()
    """The state is the input or one op from it (depth 0 or 1)."""
    FIRST = auto()
    """The state is the input (depth 0)."""
    NOT_TINY = auto()
    """Some target has more than one cell."""


W = When
"""Short name for declarations: ``@op(when=W.SAME_SHAPE)``."""

SUB_KINDS = (K.GRID, K.PROGRAM)
"""The kinds whose arguments are sub-programs (the rest are literal parameters)."""


@dataclass(frozen=True, init=False)
class OneOf:
    """An argument that is one of a fixed set of strings."""

    values: tuple[str, ...]

    def __init__(self, *values: str) -> None:
        if not values or not all(isinstance(v, str) for v in values):
            raise TypeError(f"OneOf takes strings, got {values!r}")
        object.__setattr__(self, "values", tuple(values))

    def __repr__(self) -> str:
        return f"OneOf{self.values!r}"


ParamKind = Kind | OneOf


Rows = list[list[int]]


def grid_of(text: str | Rows) -> Rows:
    """A grid written compactly, one digit a cell and a space between rows (``"120 034"``
    is ``[[1, 2, 0], [0, 3, 4]]``); a grid given as rows is returned as it is."""
    if not isinstance(text, str):
        return text
    if not text.replace(" ", "").isdigit():
        raise ValueError(f"a grid is digits with a space between rows, got {text!r}")
    return [[int(c) for c in row] for row in text.split()]


@dataclass(frozen=True, init=False)
class Case:
    """One example of an op: the arguments after the input grid (``args``; or a whole
    ``program`` in JSON form, see :meth:`of`), an input grid and the expected output,
    each as rows or as compact text (:func:`grid_of`): ``Case((4, 0), "111 101 111",
    "111 141 111")``.

    Every case is run compiled and as standalone Python by the DSL's tests, and the
    op's generator is run on it as a one-pair task (its arguments must be valid)."""

    args: tuple[Any, ...]
    grid: Any
    want: Rows
    program: Any = None

    def __init__(self, args: tuple[Any, ...], grid: Any, want: Rows | str, program: Any = None):
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "grid", grid_of(grid))
        object.__setattr__(self, "want", grid_of(want))
        object.__setattr__(self, "program", program)

    @classmethod
    def of(cls, program: Any, grid: Any, want: Rows | str) -> Case:
        """A case given as a whole program (e.g. the op over another op's output)."""
        return cls((), grid, want, program)

    def program_for(self, name: str) -> Any:
        """The case's program in JSON form (``[name, "x", *args]`` unless given)."""
        if self.program is not None:
            return self.program
        return [name, "x", *self.args]


@dataclass(frozen=True)
class OpSpec:
    """One DSL op: its primitive, the kinds of its arguments and its declaration."""

    name: str
    fn: Callable[..., Any]
    kinds: tuple[ParamKind, ...]
    family: str = ""
    """The family module (``atlas_actors/arc/ops/<family>.py``) that declares it."""
    generator: Generator | None = None
    no_generator: str = ""
    """Why the op has no generator (when it has none)."""
    cases: tuple[Case, ...] = ()
    when: When = When.ALWAYS
    """What must hold of a search state for the generator to be run."""

    def arguments(self, ctx: Ctx) -> Iterator[Args]:
        """The generator's argument tuples for ``ctx`` (none unless :attr:`when` holds)."""
        if self.generator is None or (self.when and not ctx.holds(self.when)):
            return iter(())
        return self.generator(ctx)

    @property
    def doc(self) -> str:
        """The first sentence of the primitive's docstring (one line)."""
        text = " ".join((inspect.getdoc(self.fn) or "").split())
        end = text.find(". ")
        return text if end < 0 else text[: end + 1]


_DECLARED: dict[str, OpSpec] = {}


def op(
    *,
    params: tuple[ParamKind, ...] = (),
    name: str | None = None,
    generator: Generator | Fitting | None = None,
    no_generator: str = "",
    cases: Iterable[Case] = (),
    when: When = When.ALWAYS,
    only_if: Check | OnSelf | tuple[Check | OnSelf, ...] = (),
) -> Callable[[F], F]:
    """Declare the decorated function as a DSL op (see the module docstring)."""

    def register(fn: F) -> F:
        n = name or fn.__name__
        where = f"op {n!r} ({fn.__module__})"
        if n in _DECLARED:
            raise ValueError(f"{where}: declared twice (also in {_DECLARED[n].fn.__module__})")
        kinds = (K.GRID, *params)
        bad = [k for k in kinds if not isinstance(k, Kind | OneOf)]
        if bad:
            raise TypeError(f"{where}: parameter kinds are Kind or OneOf, got {bad!r}")
        n_args = len(inspect.signature(fn).parameters)
        if n_args != len(kinds):
            raise ValueError(
                f"{where}: {len(params)} parameter kinds for {n_args - 1} parameters after the grid"
            )
        if (generator is None) == (not no_generator):
            raise ValueError(f"{where}: give a generator or the reason for none, not both")
        if (when or only_if) and generator is None:
            raise ValueError(f"{where}: when= and only_if= are conditions of the generator")
        gen = generator.of(fn) if isinstance(generator, Fitting) else generator
        checks = tuple(
            (lambda ctx, t=c.test: t(ctx, fn, ctx.bg)) if isinstance(c, OnSelf) else c
            for c in (only_if if isinstance(only_if, tuple) else (only_if,))
        )
        _DECLARED[n] = OpSpec(
            n,
            fn,
            kinds,
            fn.__module__.rpartition(".")[2],
            guarded(gen, checks) if gen and checks else gen,
            no_generator,
            tuple(cases),
            when,
        )
        return fn

    return register


def declared() -> dict[str, OpSpec]:
    """Every op declared so far, in declaration order."""
    return dict(_DECLARED)


def spec_of(fn: Callable[..., Any]) -> OpSpec:
    """The declaration of the op whose primitive is ``fn``."""
    for spec in _DECLARED.values():
        if spec.fn is fn:
            return spec
    raise KeyError(f"{getattr(fn, '__name__', fn)!r} is not a declared op")


def in_order(names: Sequence[str], history: Sequence[str]) -> list[str]:
    """``names`` in the order of ``history``, then those not in it in their own order.

    The search expands ops in order under a budget, so moving an op between modules
    must not move it in the search: the order recorded in ``history`` holds, and a new
    op goes after every recorded one without a second edit."""
    rank = {n: i for i, n in enumerate(history)}
    late = len(rank)
    return sorted(names, key=lambda n: rank.get(n, late))
