"""Evaluates a batch of candidate patches in one process; runs INSIDE the container or
sandbox, on the instance's own Python and pytest (standard library otherwise), Python 3.6
and up. The runtime's test zygote forks it (``run_job``: pytest is already imported);
without the runtime it runs on its own:

    python3 atlas_batch.py JOB.json

The job (written by ``atlas_actors.swe.repair.batch``) names the repository root, the tests
in the order to run them (the failing ones first) with a timeout each, and the candidates:
``{"files": {path: text}}`` (whole-file replacements) or ``{"diff": unified diff}``.

How a batch runs:

* The worker imports pytest once and prepares a pytest session for the selected tests
  (options parsed, plugins and initial conftests loaded, ``pytest_configure`` and
  ``pytest_sessionstart`` run: the fixture manager exists), then freezes the GC.
* Per candidate it applies the change (whole files, or ``git apply`` / ``patch``), checks
  every changed Python file compiles, and forks a child. The child collects only the
  selected test files (so the code under test is imported fresh, with the change), runs the
  tests in the given order and stops at the first one that does not pass. It reports each
  test's start and end on a pipe; the worker enforces each test's own timeout and kills the
  child's process group when it expires. Afterwards the worker kills whatever the child
  left (it is a child subreaper), puts the original files back (with their original
  modification times), removes files the tests created in the repository and the child's
  private TMPDIR, and prints one result line for the candidate.
* A candidate that changes code the worker itself has imported (code a conftest
  imports) only inside function bodies is *swapped*: its child gives each function
  object of the changed files the newly compiled code (``func.__code__``), so every
  reference to it (names imported elsewhere, bound methods, registries) runs the new
  code, and the prepared session runs as for any candidate. Code that runs at import
  (module and class bodies: defaults, decorators, class attributes, imports) must be
  unchanged, and so must the functions' names, parameters, docstrings and closure
  variables; a changed function must be found on the loaded objects and must not have
  run while the session was prepared (the worker records which code did). Otherwise
  the candidate is *rebound*: its child drops every module of the repository but the
  conftests (and other plugins) the session holds, and points those plugins' names at
  the repository's modules imported again (from cached bytecode, the changed files
  compiled afresh); the prepared session then runs as for any candidate. When that is
  not safe (a conftest holds an instance of the repository's classes, or a class built
  on one) or the re-import fails, and for a candidate that changes a conftest or a
  pytest configuration file, the child is *reloaded* instead: every module of the
  repository dropped (and pytest's import hooks) and a new pytest session run, so the
  code, conftests and configuration are all read afresh. Either way pytest, the standard
  library and the installed packages stay imported. Every candidate is reloaded when
  preparing the session failed; ``force_fresh`` runs each in a new interpreter instead
  (fork + exec, for cross-checks).
* Compiled modules go to ``sys.pycache_prefix`` (outside the repository). Every file the
  worker writes gets a modification time no other content of that file had, so a cached
  ``.pyc`` (keyed by mtime and size) never stands in for different source; a swapped
  candidate's code is compiled from its text in memory.
* Children get rlimits (file size, address space, no core) and their own process group;
  the container's pids limit bounds a fork bomb, which costs that candidate a timeout.

Output lines on stdout (everything else goes to /dev/null): ``@@atlas:<nonce>:ready {json}``,
``@@atlas:<nonce>:result {json}`` per candidate, ``@@atlas:<nonce>:done``.
"""

import contextlib
import functools
import gc
import importlib
import json
import linecache
import os
import select
import shutil
import signal
import subprocess
import sys
import time
import types
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Set, Tuple

if TYPE_CHECKING:
    from atlas_actors.sandbox.incontainer import atlas_zygote as zygote
    from atlas_actors.swe.repair.incontainer import atlas_trace as trace
else:  # shipped side by side into the workspace
    import atlas_trace as trace
    import atlas_zygote as zygote

_SCRIPT = os.path.abspath(__file__)
_GAP_S = 2.0
"""Allowance for pytest's own work between two tests (and after the last one)."""
_FRESH_START_S = 30.0
"""Allowance for a fresh interpreter to start pytest, before the collection timeout."""
_PR_SET_CHILD_SUBREAPER = 36
_MAX_TREE_DIRS = 20000
_SESSION_FILES = frozenset(
    ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", ".pytest.ini")
)
"""Files the prepared session read (or looked for) before forking: a candidate that
changes or adds one is reloaded."""


# ------------------------------------------------------------------------- child side


class BatchPlugin(trace.StateHooks):
    """Registered in the pytest session: orders the selected tests, reports each test's
    start and verdict on the pipe, and stops the run at the first test that fails."""

    def __init__(self, root: str, tests: List[str], fail_fast: bool, keep_going: int = 0) -> None:
        self.root = os.path.realpath(root)
        self.files = trace.RepoFiles(self.root)
        self.tests = tests
        self.fail_fast = fail_fast
        self.keep_going = keep_going
        """The first this many tests run even after a failure (fail-fast starts after)."""
        self.plan: List[int] = list(range(len(tests)))
        self.fd = -1
        self.pid = -1
        self.session: Any = None
        self.index: Dict[str, int] = {}
        self.states: Dict[str, trace.TestState] = {}
        self.collect_errors: List[str] = []
        self.wanted: Dict[str, Set[str]] = {}
        """Per test file: the names (functions, classes) the selected tests live under."""
        for t in tests:
            parts = t.split("::")
            if len(parts) > 1:
                self.wanted.setdefault(parts[0], set()).add(parts[1].split("[")[0])

    def attach(self, fd: int, plan: List[int]) -> None:
        """In the child: where to report, and which tests (indices) to run."""
        self.fd, self.pid, self.plan = fd, os.getpid(), plan

    def send(self, kind: str, payload: Any = None) -> None:
        if os.getpid() != self.pid:  # a process a test forked must stay silent
            return
        text = kind if payload is None else kind + " " + json.dumps(payload)
        with contextlib.suppress(OSError):
            zygote.write_all(self.fd, (text + "\n").encode("utf-8", "replace"))

    def pytest_sessionstart(self, session: Any) -> None:
        self.session = session

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            text = str(report.longrepr or "").strip().splitlines()
            last = text[-1] if text else "collection failed"
            self.collect_errors.append(f"{report.nodeid or '<session>'}: {last}"[:500])

    def pytest_pycollect_makeitem(self, collector: Any, name: str, obj: Any) -> Any:
        """Skip module attributes no selected test lives under (no items are made for
        them: collection cost follows the selection, not the module's size)."""
        if type(collector).__name__ != "Module":
            return None
        path = getattr(collector, "path", None)
        if path is None:
            return None
        wanted = self.wanted.get(os.path.relpath(os.path.realpath(str(path)), self.root))
        if wanted is None or name in wanted:
            return None
        return []

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: Any) -> None:
        # A selected id cut at a space (as swebench's parsers cut it) stands for every
        # test whose id starts so: all of them run, under the selected test's index.
        by_id: Dict[str, List[Any]] = {}
        planned = {self.tests[i]: i for i in self.plan}
        for item in items:
            key = trace.matches(trace.test_id(item, self.root), planned)
            if key is not None:
                by_id.setdefault(key, []).append(item)
        keep = []
        self.index = {}
        for i in self.plan:
            for item in by_id.get(self.tests[i], ()):
                if item.nodeid not in self.index:
                    keep.append(item)
                    self.index[item.nodeid] = i
        dropped = [item for item in items if item.nodeid not in self.index]
        items[:] = keep
        if dropped:
            config.hook.pytest_deselected(items=dropped)

    def pytest_collection_finish(self, session: Any) -> None:
        found = sorted(self.index.values())
        self.send("C", {"found": found, "errors": self.collect_errors[:5]})
        missing = set(self.plan) - set(found)
        if missing and self.fail_fast and session is not None:
            session.shouldstop = "atlas: a selected test was not collected"
            session.items[:] = []  # nothing runs; the worker reports the missing test

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.states[nodeid] = trace.TestState()
        self.send("S", self.index.get(nodeid, -1))

    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        super().pytest_runtest_makereport(item, call)
        state = self.states.get(item.nodeid)
        if state is not None and call.excinfo is not None:
            # Nobody reads pytest's formatted failure here (the worker reports the
            # exception's first line): spare the traceback pruning and formatting.
            message = state.message or "failed"
            item.repr_failure = lambda excinfo, *a, **k: message

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        state = self.states.pop(nodeid, None)
        if state is None:
            return
        self.send(
            "R",
            {
                "i": self.index.get(nodeid, -1),
                "outcome": state.outcome,
                "seconds": round(state.seconds, 6),
                "message": state.message,
                "line": state.line,
            },
        )
        stops = self.index.get(nodeid, -1) >= self.keep_going
        if (
            self.fail_fast
            and stops
            and state.outcome not in trace.PASSING
            and self.session is not None
        ):
            self.session.shouldstop = "atlas: first failure"


def _child_setup(job: Dict[str, Any], tmp: str) -> None:
    """In a forked child: own process group, limits, quiet fds, private TMPDIR."""
    zygote.child_setup(int(job["file_limit_bytes"]), int(job.get("memory_bytes") or 0), None, tmp)


def _pytest_args(job: Dict[str, Any]) -> List[str]:
    """The options, then each test file once: pytest collects a whole module either way,
    and one argument per file spares it matching every node id (the plugin selects)."""
    files = dict.fromkeys(t.split("::", 1)[0] for t in job["tests"])
    return [*job["pytest_args"], *files]


def purge_repository(root: str) -> None:
    """Forget every module of the repository at ``root`` and pytest's import hooks (in a
    reloading child: the next session imports the repository's code afresh)."""
    for name in zygote.repository_modules(root):
        del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "AssertionRewritingHook"]
    importlib.invalidate_caches()
    linecache.clearcache()


def _lookup(module: types.ModuleType, qualname: str) -> Any:
    value: Any = module
    for part in qualname.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def rebind_repository(root: str, plugins: List[types.ModuleType]) -> bool:
    """In a child whose candidate changed code the prepared session had imported: drop
    the repository's modules except ``plugins`` (the conftests and other plugin modules
    the session holds) and rebind the plugins' names that pointed into them to the same
    names in the modules imported again. False when that is not safe (a plugin holds an
    instance of a repository class, a class built on one, or a container of either) or
    the import fails: then the caller reloads the whole session."""
    keep = {id(m) for m in plugins}
    gone = {n for n, m in zygote.repository_modules(root).items() if id(m) not in keep}
    for name in gone:
        del sys.modules[name]
    importlib.invalidate_caches()
    linecache.clearcache()

    def stale(value: Any) -> bool:
        kind = type(value)
        if kind.__module__ in gone:
            return True
        if isinstance(value, type):
            return any(base.__module__ in gone for base in value.__mro__[1:])
        return False

    try:
        for plugin in plugins:
            names = plugin.__dict__
            for name, value in list(names.items()):
                if isinstance(value, types.ModuleType):
                    if value.__name__ in gone:
                        names[name] = importlib.import_module(value.__name__)
                    continue
                owner = getattr(value, "__module__", None)
                if isinstance(value, (type, types.FunctionType)) and owner in gone:
                    qualname = getattr(value, "__qualname__", "") or ""
                    new = _lookup(importlib.import_module(str(owner)), qualname)
                    if new is None:
                        return False
                    names[name] = new
                    continue
                if stale(value):
                    return False
                if isinstance(value, (list, tuple, set, frozenset, dict)):
                    items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
                    for x in list(items)[:1000]:
                        if stale(x) or getattr(x, "__module__", None) in gone:
                            return False
    except Exception:
        return False
    return True


# ------------------------------------------------------------------ swapping code

_CO_OPTIMIZED = 0x1
"""A function's code (locals in fast slots); module and class bodies lack the flag."""


def _const_key(value: Any) -> Any:
    """A constant as a key that tells ``1``, ``1.0`` and ``True`` apart."""
    if isinstance(value, types.CodeType):
        return code_key(value)
    if isinstance(value, tuple):
        return ("tuple", tuple(_const_key(v) for v in value))
    if isinstance(value, frozenset):
        return ("frozenset", frozenset(_const_key(v) for v in value))
    return (type(value).__name__, repr(value))


def code_key(code: types.CodeType) -> Any:
    """What a code object does, its line numbers left out."""
    return (
        code.co_name,
        code.co_code,
        code.co_flags,
        code.co_argcount,
        getattr(code, "co_posonlyargcount", 0),
        code.co_kwonlyargcount,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        getattr(code, "co_exceptiontable", b""),
        tuple(_const_key(c) for c in code.co_consts),
    )


def _signature(code: types.CodeType) -> Any:
    """What decorators and ``inspect`` read of a function when it is defined: its
    parameters (``*args``, ``**kwargs`` included) and docstring."""
    nargs = code.co_argcount + code.co_kwonlyargcount + getattr(code, "co_posonlyargcount", 0)
    doc = code.co_consts[0] if code.co_consts and isinstance(code.co_consts[0], str) else None
    return (code.co_flags & 0x0C, code.co_varnames[:nargs], doc)


def code_shape(code: types.CodeType, qualname: str = "") -> Tuple[Any, List[Any]]:
    """A module's (or class body's) code as ``(shape, functions)``: the shape is its
    :func:`code_key` with each function's code replaced by its qualified name (so it
    differs exactly when code that runs at import changed: module and class bodies,
    defaults, decorators, class attributes, imports); ``functions`` lists every
    function's ``(qualname, code)`` (nested ones too) in the order compiled."""
    functions: List[Any] = []

    def name_of(parent: str, c: types.CodeType) -> str:
        return parent + "." + c.co_name if parent else c.co_name

    def functions_in(c: types.CodeType, qual: str) -> None:
        functions.append((qual, c))
        for inner in c.co_consts:
            if isinstance(inner, types.CodeType):
                functions_in(inner, name_of(qual + ".<locals>", inner))

    def body(c: types.CodeType, qual: str) -> Any:
        consts = []
        for inner in c.co_consts:
            if not isinstance(inner, types.CodeType):
                consts.append(_const_key(inner))
                continue
            name = name_of(qual, inner)
            if not inner.co_flags & _CO_OPTIMIZED:  # a class body: runs at import
                consts.append(("class", body(inner, name)))
            elif inner.co_name.startswith("<"):  # a lambda, comprehension: compared whole
                consts.append(("code", code_key(inner)))
                functions_in(inner, name)
            else:
                consts.append(("def", name))
                functions_in(inner, name)
        return (*code_key(c)[:-1], tuple(consts))

    return body(code, qualname), functions


def live_functions(module: types.ModuleType, filename: str) -> Dict[types.CodeType, List[Any]]:
    """The function objects a loaded module holds whose code comes from ``filename``, by
    code: module functions, the methods of its classes (static and class methods,
    properties' accessors), nested classes, and what decorators wrap (``__wrapped__``,
    descriptors holding a function)."""
    found: Dict[types.CodeType, List[Any]] = {}
    seen: Set[int] = set()
    stack: List[Any] = list(vars(module).values())
    name = module.__name__
    while stack:
        obj = stack.pop()
        if obj is None or id(obj) in seen or isinstance(obj, types.ModuleType):
            continue
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType):
            if obj.__code__.co_filename == filename:
                found.setdefault(obj.__code__, []).append(obj)
            stack.append(obj.__dict__.get("__wrapped__"))
            continue
        if isinstance(obj, type):
            if obj.__module__ == name:
                stack.extend(vars(obj).values())
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            stack.append(obj.__func__)
            continue
        if isinstance(obj, property):
            stack.extend((obj.fget, obj.fset, obj.fdel))
            continue
        if isinstance(obj, functools.partial):
            stack.append(obj.func)
        elif callable(obj):  # functools and wrapt wrappers
            with contextlib.suppress(Exception):
                stack.append(getattr(obj, "__wrapped__", None))
        with contextlib.suppress(Exception):  # descriptors that keep the function
            attrs = object.__getattribute__(obj, "__dict__")
            if isinstance(attrs, dict):
                stack.extend(
                    v for v in list(attrs.values())[:50] if isinstance(v, types.FunctionType)
                )
    return found


def call_recorder(root: str, called: Set[types.CodeType]) -> Any:
    """A ``sys.settrace`` function that adds the code of every repository function (as
    coverage counts them: :class:`atlas_trace.RepoFiles`) that starts running to
    ``called`` (and traces no lines)."""
    files = trace.RepoFiles(root)

    def tracer(frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if files.rel(code.co_filename) is not None:
            called.add(code)

    return tracer


class Swapper:
    """Decides in the worker whether a candidate's changes to modules the prepared
    session loaded are body-only, and what to swap: each function object's code for the
    new one (so every reference to it runs the new code), every function of the file
    (those after an edit have new line numbers). A candidate is not swapped (it is
    rebound) when code that ran at import changed, a function was added, removed or
    renamed, its parameters, docstring or closure variables changed, it cannot be found
    on the loaded objects, or it already ran while the session was prepared (what it
    computed then would be stale)."""

    def __init__(self, root: str, called: Optional[Set[types.CodeType]]) -> None:
        self.root = root
        self.called = called
        """Code that ran while the session was prepared; None: unknown (no swaps)."""
        self.before: Dict[str, Any] = {}

    def modules(self, path: str) -> List[types.ModuleType]:
        out = []
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str) and os.path.realpath(filename) == path:
                out.append(module)
        return out

    def loaded(self, path: str, changes: "Changes") -> Optional[Tuple[Any, ...]]:
        """For a loaded module's file (real path): the file name its code carries, its
        original code's shape, each function's :func:`code_key`, and its live functions
        by code (the worker's modules never change: computed once per file)."""
        if path in self.before:
            return self.before[path]  # type: ignore[no-any-return]
        modules = self.modules(path)
        original = changes.original(path)
        if not modules or original is None or not path.endswith(".py"):
            return None
        filename = str(modules[0].__file__)
        shape = code_shape(compile(original, filename, "exec", dont_inherit=True))
        live: Dict[types.CodeType, List[Any]] = {}
        for module in modules:
            for code, funcs in live_functions(module, filename).items():
                live.setdefault(code, []).extend(funcs)
        keys = [code_key(code) for _, code in shape[1]]
        self.before[path] = (filename, shape, keys, live)
        return self.before[path]  # type: ignore[no-any-return]

    def plan(
        self, changes: "Changes", paths: List[str], compiled: Dict[str, Any]
    ) -> Tuple[Optional[List[Any]], str]:
        """``[(function, new code)]`` for the changed, loaded ``paths`` (real paths), or
        None and why not. ``compiled``: path -> (file name, code) already compiled."""
        if self.called is None:
            return None, "the repository was imported before the session was traced"
        swaps: List[Any] = []
        for path in paths:
            rel = os.path.relpath(path, self.root)
            known = self.loaded(path, changes)
            if known is None:
                return None, f"{rel}: not a module the session loaded"
            filename, old, keys, live = known
            name, code = compiled.get(path) or ("", None)
            if code is None or name != filename:
                with open(path, "rb") as f:
                    code = compile(f.read(), filename, "exec", dont_inherit=True)
            new = code_shape(code)
            if old[0] != new[0]:
                return None, f"{rel}: code that runs at import changed"
            if [q for q, _ in old[1]] != [q for q, _ in new[1]]:
                return None, f"{rel}: a function was added, removed or renamed"
            for k, (qualname, before) in enumerate(old[1]):
                after = new[1][k][1]
                funcs = live.get(before, [])
                if keys[k] != code_key(after):
                    if _signature(before) != _signature(after):
                        return None, f"{rel}: {qualname}: its parameters or docstring changed"
                    if before.co_freevars != after.co_freevars:
                        return None, f"{rel}: {qualname}: its closure variables changed"
                    if before in self.called:
                        return None, f"{rel}: {qualname}: it ran while the session was prepared"
                    if not funcs and "<locals>" not in qualname:
                        return None, f"{rel}: {qualname}: not found on the loaded objects"
                swaps.extend((fn, after) for fn in funcs)
        return swaps, ""


def swap_code(swaps: List[Any]) -> bool:
    """In a child: give each function its new code; False when one refuses it."""
    try:
        for fn, code in swaps:
            fn.__code__ = code
    except (ValueError, TypeError):
        return False
    linecache.clearcache()
    return True


def run_session(job: Dict[str, Any], fd: int, plan: List[int]) -> None:
    """One candidate's tests in a new pytest session (reloading child, or a fresh
    interpreter), reporting on ``fd``."""
    root = job["root"]
    plugin = BatchPlugin(root, job["tests"], bool(job["fail_fast"]), int(job.get("keep_going", 0)))
    plugin.attach(fd, plan)
    sys.dont_write_bytecode = True  # the worker's warm-up wrote the unchanged modules'
    try:
        pytest = zygote.import_pytest(job.get("pycache") or "")
        pytest.main(_pytest_args(job), plugins=[plugin])
    except BaseException as e:
        plugin.send("E", trace.describe(e))
    plugin.send("X")


def fresh_child(spec_path: str, fd: int, plan_text: str) -> None:
    """``atlas_batch.py --child SPEC FD PLAN``: one candidate's tests in a fresh interpreter."""
    with open(spec_path, encoding="utf-8") as f:
        job = json.load(f)
    os.chdir(job["root"])
    sys.path.insert(0, job["root"])
    run_session(job, fd, [int(x) for x in plan_text.split(",") if x])
    os._exit(0)


# ------------------------------------------------------------------------ worker side


class Changes:
    """The files one candidate changed, with what to put back."""

    def __init__(self, root: str, stamps: "_Stamps") -> None:
        self.root = root
        self.stamps = stamps
        self.saved: Dict[str, Tuple[Optional[bytes], Optional[os.stat_result]]] = {}
        self.new_dirs: List[str] = []

    def path(self, rel: str) -> str:
        """The absolute path of ``rel``; ValueError when it leaves the repository."""
        if not rel or rel.startswith("/") or "\0" in rel:
            raise ValueError(f"bad path {rel!r}: give a path relative to the repository")
        norm = os.path.normpath(rel)
        if norm.startswith("..") or norm.split("/")[0] == ".git":
            raise ValueError(f"bad path {rel!r}: outside the repository")
        full = os.path.join(self.root, norm)
        real = os.path.realpath(full)
        if not real.startswith(self.root.rstrip("/") + "/"):
            raise ValueError(f"bad path {rel!r}: points outside the repository")
        return full

    def save(self, rel: str) -> str:
        full = self.path(rel)
        if full not in self.saved:
            try:
                st = os.stat(full)
                with open(full, "rb") as f:
                    data: Optional[bytes] = f.read()
            except FileNotFoundError:
                st, data = None, None
            except IsADirectoryError:
                raise ValueError(f"bad path {rel!r}: a directory") from None
            self.saved[full] = (data, st)
        return full

    def write(self, rel: str, data: bytes) -> None:
        full = self.save(rel)
        parent = os.path.dirname(full)
        missing = []
        while not os.path.isdir(parent):
            missing.append(parent)
            parent = os.path.dirname(parent)
        for d in reversed(missing):
            os.mkdir(d)
            self.new_dirs.append(d)
        with open(full, "wb") as f:
            f.write(data)
        self.stamps.touch(full)

    def changed(self) -> List[str]:
        return sorted(self.saved)

    def original(self, real: str) -> Optional[bytes]:
        """What the file at real path ``real`` held before this candidate (None: no file,
        or not changed)."""
        for full, (data, _) in self.saved.items():
            if os.path.realpath(full) == real:
                return data
        return None

    def restore(self) -> None:
        for full, (data, st) in self.saved.items():
            try:
                if data is None or st is None:
                    if os.path.lexists(full):
                        os.unlink(full)
                    continue
                with open(full, "wb") as f:
                    f.write(data)
                os.chmod(full, st.st_mode & 0o7777)
                os.utime(full, ns=(st.st_atime_ns, st.st_mtime_ns))
            except OSError:
                pass
        for d in reversed(self.new_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        self.saved.clear()
        self.new_dirs.clear()


class _Stamps:
    """Modification times for written files that no earlier content of a file had
    (seconds past 2^31 + a random start: never a real time, never reused)."""

    def __init__(self) -> None:
        self.next = 3_000_000_000 + int.from_bytes(os.urandom(3), "big") * 16

    def touch(self, path: str) -> None:
        self.next += 1
        with contextlib.suppress(OSError):
            os.utime(path, ns=(self.next * 10**9, self.next * 10**9))


class TreeGuard:
    """Removes files and folders the tests created in the repository (per candidate):
    only folders whose modification time changed are listed again."""

    def __init__(self, root: str) -> None:
        self.dirs: Dict[str, Tuple[int, FrozenSet[str]]] = {}
        for path, dirnames, filenames in os.walk(root):
            with contextlib.suppress(OSError):
                self.dirs[path] = (os.stat(path).st_mtime_ns, frozenset(dirnames + filenames))
            dirnames[:] = [d for d in dirnames if d != ".git"]
            if len(self.dirs) >= _MAX_TREE_DIRS:
                break

    def clean(self) -> List[str]:
        removed = []
        for path, (mtime, names) in self.dirs.items():
            try:
                if os.stat(path).st_mtime_ns == mtime:
                    continue
                extra = set(os.listdir(path)) - names
            except OSError:
                continue
            for name in sorted(extra - {".git"}):
                full = os.path.join(path, name)
                if os.path.isdir(full) and not os.path.islink(full):
                    shutil.rmtree(full, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(full)
                removed.append(full)
            with contextlib.suppress(OSError):
                self.dirs[path] = (os.stat(path).st_mtime_ns, names)
        return removed


def _diff_paths(diff: str) -> List[str]:
    """The repository paths a unified diff touches (both sides of renames)."""
    out: List[str] = []

    def add(p: str) -> None:
        p = p.strip().split("\t")[0]
        if p.startswith('"') and p.endswith('"'):
            p = p[1:-1]
        if p != "/dev/null" and p not in out:
            out.append(p)

    for line in diff.splitlines():
        if line.startswith("diff --git "):
            parts = line[len("diff --git ") :].split(" b/")
            if len(parts) == 2 and parts[0].startswith("a/"):
                add(parts[0][2:])
                add(parts[1])
        elif line.startswith(("--- ", "+++ ")):
            p = line[4:]
            if p.startswith(("a/", "b/")):
                p = p[2:]
            add(p)
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            add(line.split(" ", 2)[2])
    return out


class Worker:
    def __init__(self, job: Dict[str, Any], out_fd: int) -> None:
        self.job = job
        self.out_fd = out_fd
        self.nonce = job["nonce"]
        self.root = os.path.realpath(job["root"])
        self.tests: List[str] = list(job["tests"])
        self.timeouts: List[float] = [float(t) for t in job["timeouts"]]
        self.collect_timeout = float(job["collect_timeout"])
        self.fail_fast = bool(job["fail_fast"])
        self.keep_going = int(job.get("keep_going", 0))
        self.tmp = job["tmp"]
        self.stamps = _Stamps()
        self.mode = "fork"
        self.prep_error = ""
        self.loaded: Set[str] = set()
        self.plugins: List[types.ModuleType] = []
        """The repository's modules the prepared session holds as plugins (conftests)."""
        self.plugin_files: Set[str] = set()
        self.ran_as = "fork"
        self.swapper = Swapper(self.root, None)
        self.swaps: List[Any] = []
        self.compiled: Dict[str, Any] = {}
        self.config: Any = None
        self.session: Any = None
        self.plugin = BatchPlugin(self.root, self.tests, self.fail_fast, self.keep_going)
        self.spec = os.path.join(self.tmp, "spec.json")
        self.guard: Optional[TreeGuard] = None
        self.results_fd = -1
        """Where each line also goes as it is written (``results_file``): what a worker
        killed half way through (with everything else in the container) had finished."""
        if job.get("results_file"):
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            self.results_fd = os.open(job["results_file"], flags, 0o644)

    def emit(self, kind: str, payload: Any = None) -> None:
        text = f"@@atlas:{self.nonce}:{kind}"
        if payload is not None:
            text += " " + json.dumps(payload, separators=(",", ":"))
        line = (text + "\n").encode("utf-8", "replace")
        zygote.write_all(self.out_fd, line)
        if self.results_fd >= 0:
            zygote.write_all(self.results_fd, line)

    # --- preparation
    def prepare(self) -> None:
        started = time.perf_counter()
        os.makedirs(self.tmp, exist_ok=True)
        with open(self.spec, "w", encoding="utf-8") as f:
            json.dump(
                {
                    k: self.job.get(k)
                    for k in ("root", "tests", "pytest_args", "fail_fast", "pycache")
                },
                f,
            )
        os.chdir(self.root)
        sys.path.insert(0, self.root)  # as `python -m pytest` does
        with contextlib.suppress(OSError):
            zygote.prctl(_PR_SET_CHILD_SUBREAPER, 1)
        version = ""
        try:
            pytest = zygote.import_pytest("")
            from _pytest.config import _prepareconfig

            version = str(pytest.__version__)
            if self.job.get("force_fresh"):
                self.mode = "fresh"
                raise RuntimeError("fresh interpreters requested")
            called: Set[types.CodeType] = set()
            traced = not zygote.repository_modules(self.root)
            previous = sys.gettrace()
            sys.settrace(call_recorder(self.root, called))
            try:
                config = _prepareconfig(_pytest_args(self.job), [self.plugin])
                config._do_configure()
                session = pytest.Session.from_config(config)
                session.exitstatus = 0
                config.hook.pytest_sessionstart(session=session)
            finally:
                sys.settrace(previous)
            self.config, self.session = config, session
            if traced:
                self.swapper.called = called
        except BaseException as e:
            self.mode = "fresh" if self.mode == "fresh" else "reload"
            self.prep_error = trace.describe(e)
        prefix = self.root.rstrip("/") + "/"
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str):
                real = os.path.realpath(filename)
                if real.startswith(prefix):
                    self.loaded.add(real)
        if self.config is not None:
            repo = zygote.repository_modules(self.root)
            held = {id(p) for p in self.config.pluginmanager.get_plugins()}
            self.plugins = [m for m in repo.values() if id(m) in held]
            for m in self.plugins:
                self.plugin_files.add(os.path.realpath(getattr(m, "__file__", "") or ""))
        if self.job.get("pycache") and hasattr(sys, "pycache_prefix"):
            sys.pycache_prefix = self.job["pycache"]  # novermin
        if self.mode == "fork":
            sys.dont_write_bytecode = False
            self.warm_up()
        sys.dont_write_bytecode = True  # children compile a changed file, never cache it
        self.guard = TreeGuard(self.root)
        gc.collect()
        if hasattr(gc, "freeze"):
            gc.freeze()  # novermin
        self.emit(
            "ready",
            {
                "cpu": round(zygote.cpu_seconds(), 4),
                "mode": self.mode,
                "error": self.prep_error,
                "seconds": round(time.perf_counter() - started, 4),
                "pytest": version,
                "python": sys.version.split()[0],
                "loaded": sorted(os.path.relpath(p, self.root) for p in self.loaded),
            },
        )

    def warm_up(self) -> None:
        """Collect once in a child, unchanged, so the compiled test and code modules are
        cached (children then only read the cache: a changed file is never written)."""
        pid = os.fork()
        if pid == 0:
            try:
                _child_setup(self.job, os.path.join(self.tmp, "warm"))
                self.config.hook.pytest_collection(session=self.session)
            finally:
                os._exit(0)
        deadline = time.monotonic() + self.collect_timeout
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.005)
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        zygote.sweep()
        shutil.rmtree(os.path.join(self.tmp, "warm"), ignore_errors=True)

    # --- one candidate
    def apply(self, cand: Dict[str, Any], changes: Changes) -> str:
        """Apply a candidate; "" or why it does not apply."""
        files = cand.get("files") or {}
        diff = cand.get("diff") or ""
        try:
            for rel, text in files.items():
                if text is None:
                    full = changes.save(rel)
                    if os.path.lexists(full):
                        os.unlink(full)
                else:
                    changes.write(rel, str(text).encode("utf-8", "surrogateescape"))
            if diff:
                for rel in _diff_paths(diff):
                    changes.save(rel)
                return self._apply_diff(diff, changes)
        except ValueError as e:
            return str(e)
        except OSError as e:
            return f"cannot write: {e}"
        return ""

    def _apply_diff(self, diff: str, changes: Changes) -> str:
        path = os.path.join(self.tmp, "candidate.diff")
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(diff if diff.endswith("\n") else diff + "\n")
        errors = []
        for argv in (
            ["git", "apply", "--whitespace=nowarn", path],
            ["patch", "--batch", "--forward", "-p1", "--fuzz=5", "--no-backup-if-mismatch",
             "-r", "-", "-i", path],
        ):  # fmt: skip
            try:
                proc = subprocess.run(
                    argv,
                    cwd=self.root,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                )
            except (OSError, subprocess.TimeoutExpired) as e:
                errors.append(f"{argv[0]}: {e}")
                continue
            if proc.returncode == 0:
                for full in changes.changed():
                    if os.path.exists(full):
                        self.stamps.touch(full)
                return ""
            errors.append(
                proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
            )
            changes.restore()  # a partial `patch` must not stay
            for rel in _diff_paths(diff):
                changes.save(rel)
        return "the diff does not apply: " + " | ".join(e.strip()[-400:] for e in errors)

    def compile_errors(self, changes: Changes) -> str:
        """Why a changed Python file does not compile, or ""; :attr:`compiled` keeps the
        code (by real path: the file name compiled with, the code)."""
        self.compiled = {}
        for full in changes.changed():
            if not full.endswith(".py") or not os.path.exists(full):
                continue
            try:
                with open(full, "rb") as f:
                    code = compile(f.read(), full, "exec", dont_inherit=True)
                self.compiled[os.path.realpath(full)] = (full, code)
            except SyntaxError as e:
                rel = os.path.relpath(full, self.root)
                return f"{rel}:{e.lineno}: {type(e).__name__}: {e.msg}"
            except (ValueError, MemoryError, RecursionError) as e:
                return f"{os.path.relpath(full, self.root)}: {trace.describe(e)}"
        return ""

    def run_tests(self, mode: str, tmp: str) -> Tuple[List[Dict[str, Any]], str]:
        """Run the selected tests (``mode``: ``fork`` from the prepared session, ``swap``
        from it with :attr:`swaps` applied, ``rebind`` from it with the repository's code
        imported again, ``reload`` in a new session, ``fresh`` in a new interpreter);
        their verdicts in run order, and a note when a test process hung or died. Without
        fail-fast a new child goes on after such a test. :attr:`ran_as` says how the
        children really ran (a swap a function refused rebinds, a rebind that was not safe
        reloads)."""
        self.ran_as = mode
        verdicts: Dict[int, Dict[str, Any]] = {}
        plan = list(range(len(self.tests)))
        notes = []
        while plan:
            decided, note = self._run_child(plan, mode, tmp, verdicts)
            if note:
                notes.append(note)
            plan = [i for i in plan if i not in verdicts]
            if decided or not note:
                break
        return [verdicts[i] for i in sorted(verdicts)], "; ".join(notes)

    def _verdict(
        self, i: int, outcome: str, message: str, seconds: float = 0.0, line: int = 0
    ) -> Dict[str, Any]:
        return {
            "test": self.tests[i],
            "outcome": outcome,
            "seconds": round(seconds, 6),
            "message": message[:500],
            "line": line,
        }

    @staticmethod
    def _merged(prior: Optional[Dict[str, Any]], new: Dict[str, Any]) -> Dict[str, Any]:
        """One selected test's verdict over the tests it stands for (a cut id): the first
        that did not pass stands, the seconds add up."""
        if prior is None:
            return new
        keep = prior if prior["outcome"] not in trace.PASSING else new
        return {**keep, "seconds": round(prior["seconds"] + new["seconds"], 6)}

    def _run_child(
        self, plan: List[int], mode: str, tmp: str, verdicts: Dict[int, Dict[str, Any]]
    ) -> Tuple[bool, str]:
        """One child over ``plan`` (test indices, in order). Returns whether the candidate
        is decided (a test failed and fail-fast is on) and, when the child hung or died, a
        note saying so (that test's verdict is then ``timeout`` or ``crashed``)."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # ---- child
            try:
                os.close(r)
                _child_setup(self.job, tmp)
                if mode == "fresh":
                    os.set_inheritable(w, True)
                    argv = [sys.executable, _SCRIPT, "--child", self.spec, str(w)]
                    os.execv(sys.executable, [*argv, ",".join(map(str, plan))])
                if mode == "swap" and not swap_code(self.swaps):
                    zygote.write_all(w, b"M rebind\n")
                    mode = "rebind"
                if mode == "rebind" and not rebind_repository(self.root, self.plugins):
                    zygote.write_all(w, b"M reload\n")
                    mode = "reload"
                if mode == "reload":
                    purge_repository(self.root)
                    run_session(self.job, w, plan)
                    os._exit(0)
                self.plugin.attach(w, plan)
                try:
                    self.config.hook.pytest_collection(session=self.session)
                    self.config.hook.pytest_runtestloop(session=self.session)
                except BaseException as e:
                    if "atlas:" not in str(e):
                        self.plugin.send("E", trace.describe(e))
                self.plugin.send("X")
            finally:
                os._exit(0)
        # ---- worker
        os.close(w)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        found: Set[int] = set(plan)
        current: Optional[int] = None
        collected = done = decided = False
        error = ""

        def next_deadline(now: float) -> float:
            later = [self.timeouts[i] for i in plan if i in found and i not in verdicts]
            return now + (later[0] if later else 0.0) + _GAP_S

        # A new session's preparation (in a fresh interpreter: pytest imported too) is ours
        # to pay, not the candidate's: it does not count against the collection timeout.
        extra = 0.0 if mode in ("fork", "swap") else _FRESH_START_S
        deadline = time.monotonic() + self.collect_timeout + extra
        buf = b""
        eof = timed_out = False
        try:
            while not done:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                ready, _, _ = select.select([r], [], [], left)
                if not ready:
                    continue
                chunk = os.read(r, 65536)
                if not chunk:
                    eof = True
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    kind, _, rest = line.decode("utf-8", "replace").partition(" ")
                    now = time.monotonic()
                    if kind == "C":
                        info = json.loads(rest)
                        collected = True
                        found = {int(i) for i in info["found"]}
                        errors = "; ".join(info.get("errors") or [])
                        for i in plan:
                            if i not in found:
                                outcome = "error" if errors else "not_found"
                                verdicts[i] = self._verdict(i, outcome, errors or "not collected")
                                if self.fail_fast:
                                    decided = True
                                    break
                        deadline = next_deadline(now)
                    elif kind == "S":
                        current = int(json.loads(rest))
                        limit = self.timeouts[current] if 0 <= current < len(self.tests) else 10.0
                        deadline = now + limit
                    elif kind == "R":
                        info = json.loads(rest)
                        i = int(info["i"])
                        current = None
                        if 0 <= i < len(self.tests):
                            verdicts[i] = self._merged(
                                verdicts.get(i),
                                self._verdict(
                                    i,
                                    info["outcome"],
                                    info["message"],
                                    float(info["seconds"]),
                                    int(info.get("line") or 0),
                                ),
                            )
                            decided = decided or (
                                self.fail_fast
                                and i >= self.keep_going
                                and info["outcome"] not in trace.PASSING
                            )
                        deadline = next_deadline(now)
                    elif kind == "M":
                        self.ran_as = rest.strip()
                    elif kind == "E":
                        error = json.loads(rest) if rest.startswith('"') else rest
                    elif kind == "X":
                        done = True
        finally:
            os.close(r)
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            status = 0
            with contextlib.suppress(ChildProcessError):
                _, status = os.waitpid(pid, 0)
            zygote.sweep()
        if timed_out or eof:
            reason = zygote.death(status) if eof else ""
            if current is not None and 0 <= current < len(self.tests):
                target = current
                msg = (
                    f"no result in {self.timeouts[current]:g}s (killed)"
                    if timed_out
                    else f"the test process died: {reason}"
                )
            else:
                pending = [i for i in plan if i not in verdicts and i in found]
                if not pending:
                    return decided, ""
                target = pending[0]
                what = "collection" if not collected else "the test process between tests"
                msg = f"{what}: " + (
                    f"no progress in {self.collect_timeout:g}s (killed)" if timed_out else reason
                )
            seconds = self.timeouts[target] if timed_out and current is not None else 0.0
            verdicts[target] = self._verdict(
                target, "timeout" if timed_out else "crashed", msg, seconds
            )
            return self.fail_fast, msg
        if error and not any(i in verdicts for i in plan):
            verdicts[plan[0]] = self._verdict(plan[0], "error", f"pytest failed: {error}")
            return True, error
        return decided, ""

    def diff_of(self, cand: Dict[str, Any], changes: Changes) -> Optional[str]:
        """The candidate as a git diff against the base commit (for the full verify)."""
        if cand.get("diff"):
            return str(cand["diff"])
        base = self.job.get("base_commit") or ""
        if not base:
            return None
        index = os.path.join(self.tmp, "index")
        env = {**os.environ, "GIT_INDEX_FILE": index}
        try:

            def git(*args: str, data: Optional[bytes] = None) -> str:
                proc = subprocess.run(
                    ["git", *args], cwd=self.root, env=env, input=data, stdout=subprocess.PIPE,
                    timeout=60, check=True,
                )  # fmt: skip
                return proc.stdout.decode("utf-8", "surrogateescape")

            git("read-tree", base)
            info = []
            for rel, text in (cand.get("files") or {}).items():
                full = changes.path(rel)
                if text is None:
                    info.append(f"0 {'0' * 40}\t{rel}")
                    continue
                blob = git(
                    "hash-object",
                    "-w",
                    "--stdin",
                    data=str(text).encode("utf-8", "surrogateescape"),
                )
                mode = "100755" if os.access(full, os.X_OK) else "100644"
                info.append(f"{mode} {blob.strip()}\t{rel}")
            git("update-index", "--index-info", data=("\n".join(info) + "\n").encode())
            return git("diff", "--cached", "--binary", base)
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(index)

    def evaluate(self, k: int, cand: Dict[str, Any]) -> Dict[str, Any]:
        started = time.perf_counter()
        cpu = zygote.cpu_seconds()
        changes = Changes(self.root, self.stamps)
        tmp = os.path.join(self.tmp, f"c{k}")
        result: Dict[str, Any] = {
            "index": k,
            "applied": False,
            "compiled": False,
            "error": "",
            "tests": [],
            "mode": "none",
            "why": "",
            "patch": None,
            "removed": [],
        }
        try:
            error = self.apply(cand, changes)
            if error:
                result["error"] = error
                return result
            result["applied"] = True
            error = self.compile_errors(changes)
            if error:
                result["error"] = error
                return result
            result["compiled"] = True
            changed = [os.path.realpath(p) for p in changes.changed()]
            mode = self.mode
            if mode == "fork" and any(
                p in self.plugin_files or os.path.basename(p) in _SESSION_FILES for p in changed
            ):
                mode = "reload"
            elif mode == "fork" and any(p in self.loaded for p in changed):
                swaps, why = self.swapper.plan(
                    changes, [p for p in changed if p in self.loaded], self.compiled
                )
                mode, self.swaps = ("rebind", []) if swaps is None else ("swap", swaps)
                result["why"] = why
            tests, note = self.run_tests(mode, tmp)
            result["mode"] = self.ran_as
            result["tests"] = tests
            result["note"] = note
            passed = len(tests) == len(self.tests) and all(
                t["outcome"] in trace.PASSING for t in tests
            )
            if passed and self.job.get("want_diff"):
                result["patch"] = self.diff_of(cand, changes)
        except Exception as e:  # the worker's own fault: report it, keep going
            result["error"] = f"worker error: {trace.describe(e)}"
        finally:
            changes.restore()
            if self.guard is not None:
                result["removed"] = [os.path.relpath(p, self.root) for p in self.guard.clean()]
            shutil.rmtree(tmp, ignore_errors=True)
            result["seconds"] = round(time.perf_counter() - started, 6)
            result["cpu"] = round(zygote.cpu_seconds() - cpu, 6)
        return result


def run_job(job: Dict[str, Any], out_fd: int) -> None:
    """Evaluate the job's candidates, writing the result lines to ``out_fd``."""
    worker = Worker(job, out_fd)
    try:
        worker.prepare()
        for k, cand in enumerate(job["candidates"]):
            worker.emit("result", worker.evaluate(int(cand.get("index", k)), cand))
    except BaseException as e:
        worker.emit("fatal", trace.describe(e))
        raise
    finally:
        shutil.rmtree(worker.tmp, ignore_errors=True)
    worker.emit("done", {"cpu": round(zygote.cpu_seconds(), 4)})


def main(argv: List[str]) -> int:
    if len(argv) >= 5 and argv[1] == "--child":
        fresh_child(argv[2], int(argv[3]), argv[4])
        return 0
    with open(argv[1], encoding="utf-8") as f:
        job = json.load(f)
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    os.close(devnull)
    del sys.path[0]  # this script's folder: not the repository's business
    run_job(job, out_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
