"""A pytest plugin shipped into the workspace: per-test outcomes, durations, tracebacks and
(optionally) per-test line coverage. Standard library only; runs INSIDE the container or
sandbox, on the instance's own Python (3.8+; the images have 3.11, so no sys.monitoring).

Fault localisation runs ``python3 -m pytest -p atlas_trace ...`` with

* ``ATLAS_TRACE_OUT``: a JSON-lines file this plugin appends to as it goes (so a run killed
  half way still leaves every finished test): ``{"kind": "test", "test", "outcome",
  "seconds", "message", "tb", "lines"}`` per test, ``{"kind": "file", "path", "branches"}``
  per repository file first seen in the coverage, ``{"kind": "collect", "seconds",
  "errors"}`` once;
* ``ATLAS_TRACE_COVERAGE=1`` to record lines (``sys.settrace``; only code in files under the
  repository root that are not tests, so the cost stays on the code under test);
* ``ATLAS_TRACE_TIMEOUT`` (seconds, default 60): a test still running then gets an
  exception (SIGALRM), so a hanging failing test still leaves its coverage;
* ``ATLAS_TRACE_ROOT`` (default: the working directory): the repository root;
* ``ATLAS_TRACE_SELECT``: a JSON list of the tests to keep, as SWE-bench names them (the
  command line names only their files): a test is kept when its id, or its id cut at the
  first whitespace as swebench's log parsers cut it (:func:`graded_id`), is in the list.

The batch worker (``atlas_batch.py``) imports the helpers below: :func:`test_id`,
:class:`TestState` (outcome, duration and message of one test from its reports) and
:class:`RepoFiles` (which files are repository code).
"""

import ast
import json
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Container, Dict, List, Optional, Set, Tuple

PASSING = ("passed", "xfailed")
"""Outcomes that count as a pass (as swebench grades: PASSED, XFAIL)."""
_TEST_DIRS = frozenset(("tests", "test", "testing"))
_MESSAGE_LIMIT = 500


def is_test_path(rel: str) -> bool:
    """Whether a repository path is test code (test files, conftest, test folders)."""
    parts = rel.split("/")
    name = parts[-1]
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return any(p in _TEST_DIRS for p in parts[:-1])


class RepoFiles:
    """Maps a code object's file name to its repository path, or None when it is not
    repository code (outside the root, a test, an installed package, this plugin)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.prefix = self.root.rstrip("/") + "/"
        self.cache: Dict[str, Optional[str]] = {}

    def rel(self, filename: str) -> Optional[str]:
        try:
            return self.cache[filename]
        except KeyError:
            pass
        out: Optional[str] = None
        if filename.endswith(".py") and not filename.startswith("<"):
            real = os.path.realpath(filename)
            if real.startswith(self.prefix):
                rel = real[len(self.prefix) :]
                parts = rel.split("/")
                if not (
                    is_test_path(rel)
                    or ".git" in parts
                    or "site-packages" in parts
                    or "dist-packages" in parts
                    or parts[-1] in ("atlas_trace.py", "atlas_batch.py")
                ):
                    out = rel
        self.cache[filename] = out
        return out


def test_id(item: Any, root: str) -> str:
    """``path/relative/to/root.py::Class::test[param]``: the node id with its file part
    made relative to the repository root (the rootdir pytest picked may be elsewhere)."""
    nodeid = str(item.nodeid)
    head, sep, rest = nodeid.partition("::")
    try:
        full = os.path.join(str(item.config.rootpath), head)
        head = os.path.relpath(full, root)
    except (AttributeError, ValueError):
        pass
    return head + sep + rest


def graded_id(test: str) -> str:
    """The id swebench's pytest log parser reads for ``test``: up to the first whitespace
    (``test_error[required-Missing data]`` is graded as ``test_error[required-Missing``).
    A cut id can stand for several parametrised tests; pytest cannot select by it."""
    parts = test.split()
    return parts[0] if parts else test


def matches(test: str, wanted: Container[str]) -> Optional[str]:
    """The entry of ``wanted`` that names ``test`` (its full id first, else its graded id)."""
    if test in wanted:
        return test
    cut = graded_id(test)
    return cut if cut in wanted else None


def _frames(exc: Optional[BaseException], files: RepoFiles) -> List[Tuple[str, int]]:
    """Repository frames of ``exc``'s traceback and of the exceptions it chains to,
    innermost first (the raising exception's frames before its causes')."""
    out: List[Tuple[str, int]] = []
    seen: Set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames: List[Tuple[str, int]] = []
        tb = exc.__traceback__
        while tb is not None:
            rel = files.rel(tb.tb_frame.f_code.co_filename)
            if rel is not None:
                frames.append((rel, tb.tb_lineno))
            tb = tb.tb_next
        for frame in reversed(frames):
            if frame not in out:
                out.append(frame)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return out


def test_line(exc: Optional[BaseException], test_file: str) -> int:
    """The line of ``test_file`` where ``exc`` passed last (the innermost frame of the
    traceback in that file: the statement of the test that failed); 0 when none is."""
    if exc is None or not test_file:
        return 0
    line = 0
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == test_file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def describe(exc: Optional[BaseException]) -> str:
    """``Type: message`` of an exception, cut to a few hundred characters."""
    if exc is None:
        return ""
    try:
        text = str(exc)
    except Exception:
        text = "<unprintable>"
    first = text.strip().splitlines()[0] if text.strip() else ""
    return f"{type(exc).__name__}: {first}"[:_MESSAGE_LIMIT] if first else type(exc).__name__


class TestState:
    """Outcome, duration and failure of one test, from its setup/call/teardown reports."""

    __test__ = False

    def __init__(self) -> None:
        self.outcome = "passed"
        self.seconds = 0.0
        self.message = ""
        self.tb: List[Tuple[str, int]] = []
        self.line = 0
        """The line of the test's own file where the failure passed last (0: none)."""
        self.reported = False

    def exception(self, call: Any, files: RepoFiles, test_file: str = "") -> None:
        """Keep the first failing phase's exception (from ``pytest_runtest_makereport``);
        ``test_file``: the test's file as its code objects name it (for :attr:`line`)."""
        excinfo = getattr(call, "excinfo", None)
        if excinfo is None or self.message:
            return
        exc = getattr(excinfo, "value", None)
        if isinstance(exc, BaseException) and type(exc).__name__ not in ("Skipped", "XFailed"):
            self.message = describe(exc)
            self.tb = _frames(exc, files)
            self.line = test_line(exc, test_file)

    def report(self, report: Any) -> None:
        """Fold one phase's report into the outcome (``pytest_runtest_logreport``)."""
        self.reported = True
        self.seconds += float(getattr(report, "duration", 0.0) or 0.0)
        wasxfail = hasattr(report, "wasxfail")
        when = report.when
        outcome: Optional[str] = None
        if when == "call":
            if report.passed:
                outcome = "xpassed" if wasxfail else "passed"
            elif report.skipped:
                outcome = "xfailed" if wasxfail else "skipped"
            else:
                outcome = "failed"
        elif report.failed:
            outcome = "error"
        elif report.skipped:
            outcome = "xfailed" if wasxfail else "skipped"
        if outcome is None:
            return
        if self.outcome not in ("failed", "error"):  # the first failure stands
            self.outcome = outcome
        if outcome in ("failed", "error") and not self.message:
            longrepr = getattr(report, "longrepr", None)
            crash = getattr(longrepr, "reprcrash", None)
            msg = getattr(crash, "message", None) or str(longrepr or "")
            self.message = str(msg).strip().splitlines()[0][:_MESSAGE_LIMIT] if msg else ""


class StateHooks:
    """Hooks both plugins share: fold each test's reports into its :class:`TestState`
    (``states`` is filled at ``pytest_runtest_logstart`` by the plugin)."""

    files: RepoFiles
    states: Dict[str, TestState]

    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        state = self.states.get(item.nodeid)
        if state is not None:
            code = getattr(getattr(item, "obj", None), "__code__", None)
            state.exception(call, self.files, getattr(code, "co_filename", "") or "")

    def pytest_runtest_logreport(self, report: Any) -> None:
        state = self.states.get(report.nodeid)
        if state is not None:
            state.report(report)


def branches(path: str) -> List[List[Any]]:
    """``[[line of an if/elif/while, [first line of each branch]], ...]`` of a file: the
    decisions whose outcome sends execution into a block (used to credit a condition with
    the suspiciousness of the blocks it chooses)."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []

    def first(stmt: ast.stmt) -> int:
        decorators = getattr(stmt, "decorator_list", None) or []
        return int(min([stmt.lineno, *(d.lineno for d in decorators)]))

    out: List[List[Any]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            kids = [first(node.body[0])] + ([first(node.orelse[0])] if node.orelse else [])
            out.append([node.lineno, kids])
        elif isinstance(node, ast.While):
            out.append([node.lineno, [first(node.body[0])]])
    return sorted(out)


class _Timeout(Exception):
    """Raised in a test that runs past ``ATLAS_TRACE_TIMEOUT``."""


class Recorder(StateHooks):
    """The fault-localisation plugin: one record per test, appended as each finishes."""

    def __init__(self, out: str, root: str, coverage: bool, timeout_s: float) -> None:
        self.out = open(out, "a", encoding="utf-8")  # noqa: SIM115 - closed at unconfigure
        self.root = os.path.realpath(root)
        self.files = RepoFiles(self.root)
        self.coverage = coverage
        self.timeout_s = timeout_s
        self.ids: Dict[str, str] = {}
        self.states: Dict[str, TestState] = {}
        self.lines: Dict[str, Set[int]] = {}
        self.known_files: Set[str] = set()
        self.collect_started = 0.0
        self.collect_errors: List[str] = []
        self.select: Optional[Dict[str, int]] = None
        """The tests to keep (their SWE-bench ids, by position: they run in that order,
        so a run cut short by its time bound has the first ones); None keeps all."""

    def _write(self, record: Dict[str, Any]) -> None:
        self.out.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.out.flush()

    # --- tracing: a global function per new frame, a local one only for repository code
    def _tracer(self) -> Callable[..., Any]:
        cache = self.files.cache
        rel_of = self.files.rel
        by_file = self.lines

        def tracer(frame: Any, event: str, arg: Any) -> Optional[Callable[..., Any]]:
            filename = frame.f_code.co_filename
            rel = cache[filename] if filename in cache else rel_of(filename)
            if rel is None:
                return None
            lines = by_file.get(rel)
            if lines is None:
                lines = by_file[rel] = set()
            add = lines.add

            def local(frame: Any, event: str, arg: Any) -> Any:
                if event == "line":
                    add(frame.f_lineno)
                return local

            return local

        return tracer

    def _alarm(self, signum: int, frame: Any) -> None:
        raise _Timeout(f"test still running after {self.timeout_s:g}s (atlas_trace timeout)")

    # --- pytest hooks
    def pytest_collection(self, session: Any) -> None:
        self.collect_started = time.perf_counter()

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.collect_errors.append(f"{report.nodeid}: {str(report.longrepr)[-300:]}")

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: Any) -> None:
        select = self.select
        keep: List[Tuple[int, int, Any]] = []
        dropped = []
        for n, item in enumerate(items):
            tid = test_id(item, self.root)
            key = tid if select is None else matches(tid, select)
            if key is None:
                dropped.append(item)
                continue
            self.ids[item.nodeid] = tid
            keep.append((select[key] if select is not None else 0, n, item))
        if select is not None:
            keep.sort(key=lambda x: (x[0], x[1]))
            items[:] = [item for _, _, item in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)

    def pytest_collection_finish(self, session: Any) -> None:
        seconds = time.perf_counter() - self.collect_started if self.collect_started else 0.0
        self._write({"kind": "collect", "seconds": seconds, "errors": self.collect_errors})

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.states[nodeid] = TestState()
        self.lines.clear()
        if self.timeout_s > 0 and hasattr(signal, "SIGALRM"):
            signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, self.timeout_s)
        if self.coverage:
            tracer = self._tracer()
            threading.settrace(tracer)
            sys.settrace(tracer)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        if self.coverage:
            sys.settrace(None)
            threading.settrace(None)
        if self.timeout_s > 0 and hasattr(signal, "SIGALRM"):
            signal.setitimer(signal.ITIMER_REAL, 0)
        state = self.states.pop(nodeid, None)
        if state is None or not state.reported:
            return
        for rel in sorted(set(self.lines) - self.known_files):
            self.known_files.add(rel)
            self._write(
                {"kind": "file", "path": rel, "branches": branches(os.path.join(self.root, rel))}
            )
        self._write(
            {
                "kind": "test",
                "test": self.ids.get(nodeid, nodeid),
                "outcome": state.outcome,
                "seconds": round(state.seconds, 6),
                "message": state.message,
                "tb": state.tb,
                "lines": {rel: sorted(lines) for rel, lines in sorted(self.lines.items())},
            }
        )
        self.lines.clear()

    def pytest_unconfigure(self, config: Any) -> None:
        self.out.close()


def pytest_configure(config: Any) -> None:
    """Register the recorder when ``-p atlas_trace`` is given and ATLAS_TRACE_OUT is set."""
    out = os.environ.get("ATLAS_TRACE_OUT")
    if not out:
        return
    recorder = Recorder(
        out,
        os.environ.get("ATLAS_TRACE_ROOT") or os.getcwd(),
        os.environ.get("ATLAS_TRACE_COVERAGE", "0") == "1",
        float(os.environ.get("ATLAS_TRACE_TIMEOUT", "60")),
    )
    select = os.environ.get("ATLAS_TRACE_SELECT")
    if select:
        recorder.select = {t: i for i, t in reversed(list(enumerate(json.loads(select))))}
    config.pluginmanager.register(recorder, "atlas_trace_recorder")
