"""What the offline repair reads from the issue text and the failing tests' failures."""

from __future__ import annotations

from atlas_actors.swe.repair.hints import MAX_NUMBERS, MAX_STRINGS, RepairHints, hints_from


def test_numbers_strings_and_exceptions_in_the_order_they_occur() -> None:
    statement = (
        "Parsing `x[3]` at line 12 fails:\n\n    >>> parse('a b')\n"
        'Should raise ParseError("bad token") for 3 or 4.5 tokens, not v2 or 1e9.'
    )
    failures = [
        "KeyError: 'b'",
        "AssertionError: assert 1 == 2",
        "ParseError: boom",  # not a builtin: the family catches builtins only
        "ZeroDivisionError: division by zero",
        "KeyError: 'c'",
    ]
    hints = hints_from(statement, failures)
    assert hints.numbers == (3, 12)  # 4.5, v2 and 1e9 are not integers of the text
    assert hints.strings == ("a b", "bad token")
    assert hints.exceptions == ("KeyError", "ZeroDivisionError")
    # a test id standing for several tests brings each of their failures, one per line
    folded = hints_from("", ["TypeError: bad format\nValueError: unknown code\nTypeError: x"])
    assert folded.exceptions == ("TypeError", "ValueError")
    assert hints


def test_caps_and_an_empty_issue() -> None:
    many = " ".join(str(n) for n in range(100, 100 + 3 * MAX_NUMBERS))
    quoted = " ".join(f'"s{n}"' for n in range(3 * MAX_STRINGS))
    hints = hints_from(f"{many} {quoted}")
    assert hints.numbers == tuple(range(100, 100 + MAX_NUMBERS))
    assert hints.strings == tuple(f"s{n}" for n in range(MAX_STRINGS))
    empty = hints_from("", ["Failed: DID NOT RAISE", "Warning: x"])
    assert empty == RepairHints() and not empty
