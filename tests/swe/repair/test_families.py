"""Each operator family on small snippets: the expected fix is among its candidates, the
diff touches only the edited line(s), comments and formatting elsewhere stay, every
candidate of the family sits on the suspicious statement, and the shared contract of
``conftest.check_edits`` (compiles, new, no duplicates, diff applies) holds.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from atlas_actors.swe.repair.catalogue import FAMILIES
from atlas_actors.swe.repair.hints import RepairHints
from atlas_actors.swe.repair.patch import CandidateEdit

Generate = Callable[..., list[CandidateEdit]]

HINTS = {
    "condition_synthesize": RepairHints(numbers=(3, 5, 15)),
    "exception_translate": RepairHints(strings=("unknown setting",), exceptions=("KeyError",)),
    "handler_widen": RepairHints(exceptions=("TypeError",)),
}
"""What the issue would say, for the families that need it (the others get none)."""

# family, buggy source, fixed source, suspicious line, changed lines of the fix
CASES: list[tuple[str, str, str, int, int]] = [
    (
        "handler_widen",
        """
        def lookup(table, key):
            try:
                return table[key]  # None when unset
            except KeyError:
                return None
        """,
        """
        def lookup(table, key):
            try:
                return table[key]  # None when unset
            except (KeyError, TypeError):
                return None
        """,
        4,
        1,
    ),
    (
        "comparison_operator",
        """
        def fits(line, width):
            # exactly full fits
            return len(line)  <  width   # keep me
        """,
        """
        def fits(line, width):
            # exactly full fits
            return len(line)  <=  width   # keep me
        """,
        3,
        1,
    ),
    (
        "comparison_operator",
        """
        def missing(x, seen):
            return x in seen
        """,
        """
        def missing(x, seen):
            return x not in seen
        """,
        2,
        1,
    ),
    (
        "comparison_operator",
        """
        def unset(x):
            return x == None
        """,
        """
        def unset(x):
            return x is None
        """,
        2,
        1,
    ),
    (
        "arithmetic_operator",
        """
        def middle(lo, hi):
            return (lo + hi) / 2
        """,
        """
        def middle(lo, hi):
            return (lo + hi) // 2
        """,
        2,
        1,
    ),
    (
        "arithmetic_operator",
        """
        def inner(total, h, pad):
            return total - h * pad
        """,
        """
        def inner(total, h, pad):
            return total - (h + pad)
        """,
        2,
        1,
    ),
    (
        "arithmetic_operator",
        """
        def countdown(n):
            n += 1
            return n
        """,
        """
        def countdown(n):
            n -= 1
            return n
        """,
        2,
        1,
    ),
    (
        "boolean_operator",
        """
        def ok(a, b):
            return a or b
        """,
        """
        def ok(a, b):
            return a and b
        """,
        2,
        1,
    ),
    (
        "boolean_operator",
        """
        def ok(a, b, c):
            return a or b and c
        """,
        """
        def ok(a, b, c):
            return a and (b and c)
        """,
        2,
        1,
    ),
    (
        "unary_operator",
        """
        def allowed(user):
            return not user.banned
        """,
        """
        def allowed(user):
            return user.banned
        """,
        2,
        1,
    ),
    (
        "unary_operator",
        """
        def valid(a, b):
            return a and b
        """,
        """
        def valid(a, b):
            return a and not b
        """,
        2,
        1,
    ),
    (
        "unary_operator",
        """
        def delta(a, b):
            return a + b
        """,
        """
        def delta(a, b):
            return a + -b
        """,
        2,
        1,
    ),
    (
        "condition_negate",
        """
        def first_even(xs):
            for x in xs:
                if x % 2:
                    return x
        """,
        """
        def first_even(xs):
            for x in xs:
                if not x % 2:
                    return x
        """,
        3,
        1,
    ),
    (
        "condition_negate",
        """
        def evens(xs):
            return [x for x in xs if x % 2 == 1]
        """,
        """
        def evens(xs):
            return [x for x in xs if not (x % 2 == 1)]
        """,
        2,
        1,
    ),
    (
        "condition_drop",
        """
        def ready(job):
            if job.done and job.ok:
                return True
            return False
        """,
        """
        def ready(job):
            if job.done:
                return True
            return False
        """,
        2,
        1,
    ),
    (
        "condition_widen",
        """
        def pick(items, i):
            if i < 0:
                return None
            if items[i]:
                return items[i]
        """,
        """
        def pick(items, i):
            if i < 0:
                return None
            if items[i] or i < 0:
                return items[i]
        """,
        4,
        1,
    ),
    (
        "off_by_one_constant",
        """
        def pages(n):
            return (n + 9) // 10
        """,
        """
        def pages(n):
            return (n + 9) // 11
        """,
        2,
        1,
    ),
    (
        "off_by_one_constant",
        """
        def indices(n):
            return list(range(n - 1))
        """,
        """
        def indices(n):
            return list(range(n))
        """,
        2,
        1,
    ),
    (
        "off_by_one_index",
        """
        def last(xs):
            return xs[len(xs)]
        """,
        """
        def last(xs):
            return xs[len(xs) - 1]
        """,
        2,
        1,
    ),
    (
        "off_by_one_index",
        """
        def last(xs):
            return xs[0]
        """,
        """
        def last(xs):
            return xs[-1]
        """,
        2,
        1,
    ),
    (
        "slice_bound",
        """
        def tail(xs):
            return xs[:-1]
        """,
        """
        def tail(xs):
            return xs[:]
        """,
        2,
        1,
    ),
    (
        "slice_bound",
        """
        def rest(xs):
            return xs[:]
        """,
        """
        def rest(xs):
            return xs[1:]
        """,
        2,
        1,
    ),
    (
        "slice_bound",
        """
        def window(xs, i, k):
            return xs[i : i + k - 1]
        """,
        """
        def window(xs, i, k):
            return xs[i : i + k]
        """,
        2,
        1,
    ),
    (
        "operand_swap",
        """
        def gap(a, b):
            return a - b
        """,
        """
        def gap(a, b):
            return b - a
        """,
        2,
        1,
    ),
    (
        "operand_swap",
        """
        def gap(a, b, c):
            return a + b - c
        """,
        """
        def gap(a, b, c):
            return c - (a + b)
        """,
        2,
        1,
    ),
    (
        "call_args_swap",
        """
        def clamp(x, lo, hi):
            return max(lo, min(x, hi))

        def use(v):
            return clamp(v, 10, 0)
        """,
        """
        def clamp(x, lo, hi):
            return max(lo, min(x, hi))

        def use(v):
            return clamp(v, 0, 10)
        """,
        5,
        1,
    ),
    (
        "identifier_replace",
        """
        def total(prices, discount):
            result = 0
            for price in prices:
                result += prices
            return result - discount
        """,
        """
        def total(prices, discount):
            result = 0
            for price in prices:
                result += price
            return result - discount
        """,
        4,
        1,
    ),
    (
        "identifier_replace",
        """
        def squares(xs, n):
            return [n * n for x in xs]
        """,
        """
        def squares(xs, n):
            return [x * n for x in xs]
        """,
        2,
        1,
    ),
    (
        "attribute_replace",
        """
        class Box:
            def __init__(self, w, h):
                self.width = w
                self.height = h

            def area(self):
                return self.width * self.width
        """,
        """
        class Box:
            def __init__(self, w, h):
                self.width = w
                self.height = h

            def area(self):
                return self.width * self.height
        """,
        7,
        1,
    ),
    (
        "literal_replace",
        """
        SEP = ","

        def join(parts):
            return ";".join(parts)
        """,
        """
        SEP = ","

        def join(parts):
            return ",".join(parts)
        """,
        4,
        1,
    ),
    (
        "literal_replace",
        """
        def fresh():
            return [None]
        """,
        """
        def fresh():
            return []
        """,
        2,
        1,
    ),
    (
        "literal_replace",
        """
        def start():
            count = 1
            return count
        """,
        """
        def start():
            count = 0
            return count
        """,
        2,
        1,
    ),
    (
        "boolean_literal",
        """
        def strict():
            return dict(strict=False)
        """,
        """
        def strict():
            return dict(strict=True)
        """,
        2,
        1,
    ),
    (
        "builtin_swap",
        """
        def best(scores):
            return min(scores)
        """,
        """
        def best(scores):
            return max(scores)
        """,
        2,
        1,
    ),
    (
        "builtin_swap",
        """
        def collect(out, items):
            out.append(items)
        """,
        """
        def collect(out, items):
            out.extend(items)
        """,
        2,
        1,
    ),
    (
        "function_name_replace",
        """
        def inc(x):
            return x + 1

        def dec(x):
            return x - 1

        def down(x):
            return inc(x)
        """,
        """
        def inc(x):
            return x + 1

        def dec(x):
            return x - 1

        def down(x):
            return dec(x)
        """,
        8,
        1,
    ),
    (
        "call_wrap",
        """
        def longer(a, b):
            return a > b
        """,
        """
        def longer(a, b):
            return len(a) > b
        """,
        2,
        1,
    ),
    (
        "call_unwrap",
        """
        def scale(xs, k):
            return [x * k for x in list(xs)], abs(k)
        """,
        """
        def scale(xs, k):
            return [x * k for x in list(xs)], k
        """,
        2,
        1,
    ),
    (
        "method_call_add",
        """
        def words(text):
            return text.strip().split()

        def clean(name):
            return name
        """,
        """
        def words(text):
            return text.strip().split()

        def clean(name):
            return name.strip()
        """,
        5,
        1,
    ),
    (
        "attribute_access_add",
        """
        def label(node):
            print(node.name)
            return node
        """,
        """
        def label(node):
            print(node.name)
            return node.name
        """,
        3,
        1,
    ),
    (
        "call_args_more",
        """
        def show(rows):
            print(rows, sep=", ")
            print(rows)
        """,
        """
        def show(rows):
            print(rows, sep=", ")
            print(rows, sep=", ")
        """,
        3,
        1,
    ),
    (
        "call_args_more",
        """
        def order(xs, reverse):
            return sorted(xs)

        def sorted(xs, reverse=False):
            return xs
        """,
        """
        def order(xs, reverse):
            return sorted(xs, reverse=reverse)

        def sorted(xs, reverse=False):
            return xs
        """,
        2,
        1,
    ),
    (
        "call_args_less",
        """
        def parse(text):
            return int(text, 16)
        """,
        """
        def parse(text):
            return int(text)
        """,
        2,
        1,
    ),
    (
        "keyword_arg_replace",
        """
        def plot(xs):
            draw(xs, colour="red")
            draw(xs, width=2)

        def draw(xs, colour="black", width=1):
            return xs
        """,
        """
        def plot(xs):
            draw(xs, colour="red")
            draw(xs, colour=2)

        def draw(xs, colour="black", width=1):
            return xs
        """,
        3,
        1,
    ),
    (
        "caller_replace",
        """
        def merge(left, right):
            out = []
            out.extend(left)
            left.extend(right)
            return out
        """,
        """
        def merge(left, right):
            out = []
            out.extend(left)
            out.extend(right)
            return out
        """,
        4,
        1,
    ),
    (
        "return_value",
        """
        def find(xs, target):
            for i, x in enumerate(xs):
                if x == target:
                    return i
            return 0
        """,
        """
        def find(xs, target):
            for i, x in enumerate(xs):
                if x == target:
                    return i
            return None
        """,
        5,
        1,
    ),
    (
        "return_value",
        """
        def best(xs):
            top = max(xs)
            return xs
        """,
        """
        def best(xs):
            top = max(xs)
            return top
        """,
        3,
        1,
    ),
    (
        "decorator_change",
        """
        class C:
            @staticmethod
            def make(cls):
                return cls()
        """,
        """
        class C:
            @classmethod
            def make(cls):
                return cls()
        """,
        2,
        1,
    ),
    (
        "stmt_delete",
        """
        def drain(q):
            out = []
            while q:
                out.append(q.pop())
                out.append(None)
            return out
        """,
        """
        def drain(q):
            out = []
            while q:
                out.append(q.pop())
            return out
        """,
        5,
        1,
    ),
    (
        "stmt_insert",
        """
        def count_up(n):
            i = 0
            seen = []
            while i < n:
                seen.append(i)
            return seen
        """,
        """
        def count_up(n):
            i = 0
            seen = []
            while i < n:
                seen.append(i)
                i += 1
            return seen
        """,
        5,
        1,
    ),
    (
        "stmt_insert",
        """
        def first_negative(xs):
            found = None
            for x in xs:
                if x < 0:
                    found = x
            return found
        """,
        """
        def first_negative(xs):
            found = None
            for x in xs:
                if x < 0:
                    found = x
                    break
            return found
        """,
        5,
        1,
    ),
    (
        "stmt_replace",
        """
        def reset(state):
            state.count = 1
            state.items = []
            state.count += 1
            return state
        """,
        """
        def reset(state):
            state.count = 1
            state.items = []
            state.count = 1
            return state
        """,
        4,
        1,
    ),
    (
        "stmt_swap",
        """
        def pop_first(xs):
            del xs[0]
            head = xs[0]
            return head
        """,
        """
        def pop_first(xs):
            head = xs[0]
            del xs[0]
            return head
        """,
        2,
        2,
    ),
    (
        "guard_insert",
        """
        def name_of(user):
            label = "?"
            label = user.name
            return label
        """,
        """
        def name_of(user):
            label = "?"
            if user is not None:
                label = user.name
            return label
        """,
        3,
        2,
    ),
    (
        "condition_synthesize",
        """
        def fizz_only(n):
            # multiples of 3 that are not multiples of 5
            return n % 3 == 0   # keep me
        """,
        """
        def fizz_only(n):
            # multiples of 3 that are not multiples of 5
            return n % 3 == 0 and n % 5 != 0   # keep me
        """,
        3,
        1,
    ),
    (
        "condition_synthesize",
        """
        def small(n):
            if n < 10:
                return True
            return False
        """,
        """
        def small(n):
            if n < 10 or n < 15:
                return True
            return False
        """,
        2,
        1,
    ),
    (
        "exception_translate",
        """
        class SettingError(Exception):
            pass


        def setting(values, name):
            if not name:
                raise SettingError("no name")
            return values[name]  # plain lookup
        """,
        """
        class SettingError(Exception):
            pass


        def setting(values, name):
            if not name:
                raise SettingError("no name")
            try:
                return values[name]  # plain lookup
            except KeyError as exc:
                raise SettingError("unknown setting") from exc
        """,
        8,
        4,
    ),
    (
        "collection_update",
        """
        def first_sightings(names):
            seen = set()
            out = []
            for name in names:
                if name in seen:
                    continue
                out.append(name)
            return out
        """,
        """
        def first_sightings(names):
            seen = set()
            out = []
            for name in names:
                if name in seen:
                    continue
                out.append(name)
                seen.add(name)
            return out
        """,
        7,
        1,
    ),
    (
        "return_computed",
        """
        def parse(text):
            if text.endswith("%"):
                value = float(text[:-1]) / 100
            return float(text)
        """,
        """
        def parse(text):
            if text.endswith("%"):
                value = float(text[:-1]) / 100
                return value
            return float(text)
        """,
        3,
        1,
    ),
    (
        "base_case",
        """
        def fact(n):
            if n < 0:
                raise ValueError("negative")
            return n * fact(n - 1)
        """,
        """
        def fact(n):
            if n < 0:
                raise ValueError("negative")
            if n == 0:
                return 1
            return n * fact(n - 1)
        """,
        4,
        2,
    ),
]


def _ids() -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for family, *_ in CASES:
        seen[family] = seen.get(family, 0) + 1
        out.append(f"{family}-{seen[family]}")
    return out


@pytest.mark.parametrize(("family", "buggy", "fixed", "line", "changed"), CASES, ids=_ids())
def test_family_finds_the_fix(
    generate: Generate,
    dedent: Callable[[str], str],
    family: str,
    buggy: str,
    fixed: str,
    line: int,
    changed: int,
) -> None:
    edits = generate(buggy, {line: 1.0}, families=[family], hints=HINTS.get(family))
    assert edits, f"{family} proposed nothing"
    assert {e.family for e in edits} == {family}
    match = [e for e in edits if e.new_text == dedent(fixed)]
    assert match, f"{family}: the fix is not among {[e.label for e in edits]}"
    edit = match[0]
    # The diff changes only the fix's lines; everything else (comments too) is the original's.
    first, removed, added = edit.hunk
    assert first in (line, line + 1) and max(removed, added) == changed
    body = [row for row in edit.diff.splitlines()[4:] if row[:1] in "+-"]
    assert len(body) == removed + added


@pytest.mark.parametrize(("family", "buggy", "fixed", "line", "changed"), CASES, ids=_ids())
def test_family_stays_on_the_suspicious_statement(
    generate: Generate, family: str, buggy: str, fixed: str, line: int, changed: int
) -> None:
    del fixed
    edits = generate(buggy, {line: 1.0}, families=[family], hints=HINTS.get(family))
    assert all(e.line == line for e in edits), [e.label for e in edits if e.line != line]
    assert all(e.suspiciousness == 1.0 for e in edits)
    for edit in edits:
        first, removed, added = edit.hunk
        assert line - 1 <= first <= line + 1, edit.label
        assert removed <= 2 and added <= max(3, changed), edit.label


def test_every_family_has_a_case() -> None:
    assert {family for family, *_ in CASES} == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(HINTS))
def test_families_that_need_the_issue_propose_nothing_without_it(
    generate: Generate, family: str
) -> None:
    """Without hints (the issue's constants and messages, the failing tests' exceptions)
    these families have nothing to build with; with hints they do."""
    for name, buggy, _, line, _ in CASES:
        if name == family:
            assert generate(buggy, {line: 1.0}, families=[family]) == []
            assert generate(buggy, {line: 1.0}, families=[family], hints=HINTS[family])


def test_synthesized_comparisons_follow_the_issue_and_skip_the_statements_own(
    generate: Generate,
) -> None:
    """Constants in the issue's order, both equalities, the statement's own comparison
    never re-added, and a constant is never replaced by itself."""
    edits = generate(
        "def leap(y):\n    return y % 4 == 0\n",
        {2: 1.0},
        families=["condition_synthesize"],
        hints=RepairHints(numbers=(100, 4, 400)),
    )
    labels = [e.label.split(" at ")[0] for e in edits]
    assert labels[:4] == ["and y % 100 == 0", "or y % 100 == 0", "and y % 100 != 0",
                          "or y % 100 != 0"]  # fmt: skip
    assert "and y % 4 == 0" not in labels and "or y % 4 != 0" not in labels
    assert "and y % 400 == 0" in labels


def test_handler_widening_reads_the_failing_tests_exceptions(generate: Generate) -> None:
    source = (
        "def get(d, k, a):\n"
        "    try:\n"
        "        try:\n"
        "            v = d[k][a]\n"
        "        except KeyError:\n"
        "            v = None\n"
        "    except KeyError:\n"
        "        v = 0\n"
        "    try:\n"
        "        w = d[a]\n"
        "    except Exception:\n"
        "        w = 0\n"
        "    return v, w\n"
    )
    # no failing test's exception, no edit; a clause that catches everything is left alone
    assert generate(source, {2: 1.0}, families=["handler_widen"]) == []
    hints = RepairHints(exceptions=("TypeError", "ValueError"))
    assert generate(source, {9: 1.0, 11: 1.0}, families=["handler_widen"], hints=hints) == []
    # a line of a try's body or one of its except lines: its clauses gain the exception
    both = source.replace("except KeyError:", "except (KeyError, TypeError):")
    outer = source.replace(
        "    except KeyError:\n        v = 0", "    except (KeyError, TypeError):\n        v = 0"
    )
    inner = source.replace(
        "        except KeyError:\n            v = None",
        "        except (KeyError, TypeError):\n            v = None",
    )
    for line in (4, 5, 7):
        texts = [
            e.new_text
            for e in generate(source, {line: 1.0}, families=["handler_widen"], hints=hints)
        ]
        assert both in texts and outer in texts  # every clause catching the same types, too
        assert (
            source.replace("except KeyError:", "except (KeyError, TypeError, ValueError):") in texts
        )
        assert inner in texts
    # a line of a clause's body alone: the exception was caught there already
    assert generate(source, {8: 1.0}, families=["handler_widen"], hints=hints) == []


def test_exception_translation_needs_a_class_the_file_raises(generate: Generate) -> None:
    source = "def get(d, k):\n    return d[k]\n"
    hints = RepairHints(exceptions=("KeyError",))
    assert generate(source, {2: 1.0}, families=["exception_translate"], hints=hints) == []
    raising = (
        "def get(d, k):\n    if k is None:\n        raise LookupError('none')\n    return d[k]\n"
    )
    [edit] = generate(raising, {4: 1.0}, families=["exception_translate"], hints=hints)
    assert "except KeyError as exc:" in edit.new_text
    assert "raise LookupError(str(exc)) from exc" in edit.new_text


@pytest.mark.parametrize(("family", "buggy", "fixed", "line", "changed"), CASES, ids=_ids())
def test_no_candidate_off_the_suspicious_lines(
    generate: Generate,
    dedent: Callable[[str], str],
    family: str,
    buggy: str,
    fixed: str,
    line: int,
    changed: int,
) -> None:
    """With another line suspicious (the first, or the last), the family proposes nothing
    on the buggy line."""
    del fixed, changed
    other = 1 if line != 1 else dedent(buggy).count("\n")
    edits = generate(buggy, {other: 1.0}, families=[family], hints=HINTS.get(family))
    assert all(e.line != line for e in edits)


ODD_SPACING = """
def f(items, n):
    total=0   # running
    for i in range( 0,n ):
        total  +=  items[ i ]*2    # weight ( x )
    return total
"""


def test_expression_edits_keep_the_lines_formatting(generate: Generate) -> None:
    edits = generate(ODD_SPACING, {4: 1.0})
    old = ODD_SPACING.lstrip("\n").splitlines()[3]
    one_line = [e for e in edits if e.hunk == (4, 1, 1)]
    assert len(one_line) > 20
    for edit in one_line:
        new = edit.new_text.splitlines()[3]
        if edit.family.startswith("stmt_"):
            continue
        assert new.startswith("        ") and not new.startswith("         "), edit.label
        assert new.endswith("    # weight ( x )"), edit.label
        # One short stretch of the original line changes.
        head = 0
        while head < min(len(old), len(new)) and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        assert len(old) - head - tail <= 12, edit.label  # the original tokens edited
    texts = {e.new_text.splitlines()[3] for e in one_line}
    assert "        total  +=  items[ i ]*3    # weight ( x )" in texts
    assert "        total  -=  items[ i ]*2    # weight ( x )" in texts
    assert "        total  +=  items[ i + 1 ]*2    # weight ( x )" in texts


@pytest.mark.parametrize(
    ("line", "numbers", "want"),
    [
        ("    if t < 5:\n        return 1\n", (80,), "    if t < 5 or t >= 80:\n"),
        ("    ok = x >= 1\n", (9,), "    ok = x >= 1 and x <= 9\n"),
    ],
)
def test_an_ordering_is_synthesised_in_both_directions(
    generate: Generate, line: str, numbers: tuple[int, ...], want: str
) -> None:
    """A second range on the other side (``t < 5 or t >= 80``), or a bound on the other
    side (``x >= 1 and x <= 9``)."""
    source = f"def f(t, x):\n{line}    return 0\n"
    edits = generate(
        source, {2: 1.0}, families=["condition_synthesize"], hints=RepairHints(numbers=numbers)
    )
    assert want in {e.new_text.splitlines(keepends=True)[1] for e in edits}


def test_collection_updates_follow_how_the_file_builds_the_collection(
    generate: Generate,
) -> None:
    """A dict gets ``x[k] = v`` with a nearby name, a list ``append``, a collection the
    function already updates or an upper-case table nothing."""
    source = """
    LIMITS = {}
    owners = {}
    queue = []


    def claim(item, who):
        if item in owners or item in LIMITS:
            return False
        ticket = len(queue)
        if item not in queue:
            print(ticket)
        return True
    """
    edits = generate(source, {11: 1.0}, families=["collection_update"])
    made = {e.label.split("`")[1] for e in edits}
    assert "owners[item] = ticket" in made and "queue.append(item)" in made
    assert not any("LIMITS" in m or "queue.add" in m for m in made)


def test_base_cases_go_only_into_recursive_functions(generate: Generate) -> None:
    flat = "def f(n):\n    if n < 0:\n        return 0\n    return n * 2\n"
    assert generate(flat, {4: 1.0}, families=["base_case"]) == []
    recursive = flat.replace("n * 2", "f(n - 1) + 2")
    edits = generate(recursive, {4: 1.0}, families=["base_case"], hints=RepairHints(numbers=(7,)))
    labels = [e.label.split("`")[1] for e in edits]
    assert labels[:3] == ["if n == 0: return 0", "if n == 0: return 7", "if n == 0: return 1"]


def test_return_of_a_computed_value_needs_a_function_that_returns_values(
    generate: Generate,
) -> None:
    procedure = "def log(x):\n    if x:\n        text = str(x)\n    print(x)\n"
    assert generate(procedure, {3: 1.0}, families=["return_computed"]) == []
