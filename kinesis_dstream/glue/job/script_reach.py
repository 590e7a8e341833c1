"""Which calls of a Glue script the job is sure to make: what the start check
(:mod:`~kinesis_dstream.glue.job.script_check`) may refuse on, so that a script that runs
on Glue is never refused.

Sure is read from the script's syntax tree (nothing is run): the script's straight-line
code, and the straight-line code of a function called by its name, or handed to
``forEachBatch`` (``foreachBatch``), from code that is itself sure, found again from each
such function until nothing new is found. Nothing under a condition is sure: ``if``
branches and conditional expressions, the operands of ``and``/``or`` after the first,
``match`` cases, ``except`` handlers, ``for`` and ``while`` bodies, comprehensions'
elements and conditions, lambda and class bodies; nor what follows a statement that may
end its block early (``return``, ``raise``, ``sys.exit()``, a call of a script function
that may, ``forEachBatch`` or ``awaitTermination``, which return only once the query
stops). ``try``, ``else``, ``finally`` and ``with`` bodies are sure. In a function handed
to ``forEachBatch``, a test of its batch's size (Glue Studio's ``if data_frame.count() >
0:``, ``if data_frame.rdd.isEmpty(): return``) is known once records come, so it is no
condition; a test that ``and``-s it with anything else is.

Where the reading cannot be sure, nothing is: a function reached only through a dict,
``getattr`` or another call by value; a name bound more than once; a decorated function
or a generator; a script using ``exec``, ``eval``, ``globals()`` (which may bind names
unseen) or ``import *`` from its own modules.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from typing import Optional

from .size_test import method_name, size_sign

#: Calls that end the process.
EXIT_CALLS = (("sys", "exit"), ("os", "_exit"), ("os", "abort"))
EXIT_NAMES = ("exit", "quit")
#: Calls that return only once the streaming query stops (on Glue a stopped job may not).
BLOCKING = ("forEachBatch", "awaitTermination", "awaitAnyTermination")
#: Names whose use may bind the script's names where a reading of its tree cannot see.
DYNAMIC_NAMES = ("exec", "eval", "globals", "locals", "vars", "setattr", "delattr")
DYNAMIC_ATTRIBUTES = ("__dict__", "__globals__")
#: ``from … import *`` of these binds only the layer's and PySpark's names.
KNOWN_STAR_IMPORTS = ("awsglue", "pyspark")
#: Methods that hand a batch function to the query: the argument's keyword and position.
BATCH_HANDOFFS = {"forEachBatch": ("batch_function", 1), "foreachBatch": ("func", 0)}

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: ``try`` and, from Python 3.11, ``try``/``except*``.
TRIES = tuple(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))


def sure_calls(tree: ast.Module) -> set:
    """The :class:`ast.Call` nodes of ``tree`` the job is sure to run (a batch function's
    once records come); empty when the script binds names dynamically."""
    script = _Script(tree)
    if script.dynamic:
        return set()
    walk = _Walk(script)
    walk.block(tree.body, None)
    done: set = set()
    while True:
        todo = [(f, True) for f in walk.batch] + [(f, False) for f in walk.called]
        todo = [entry for entry in todo if entry not in done]
        if not todo:
            return walk.calls
        for function, as_batch in todo:
            done.add((function, as_batch))
            walk.block(function.body, _frame_parameter(function) if as_batch else None)


def binding_counts(tree: ast.AST) -> Counter:
    """How many times each name is bound anywhere in ``tree`` (assigned, defined,
    imported, a parameter, a loop's or a handler's target, declared global...)."""
    return Counter(name for node in ast.walk(tree) for name in _bound_names(node))


class _Script:
    """What the walk needs to know of the whole script."""

    def __init__(self, tree: ast.Module) -> None:
        nodes = list(ast.walk(tree))
        bindings = binding_counts(tree)
        methods = {id(s) for n in nodes if isinstance(n, ast.ClassDef) for s in n.body}
        defs = [n for n in nodes if isinstance(n, FUNCTIONS)]
        #: Functions a call by name surely runs: bound once, plain, neither a method nor
        #: a generator (whose call runs nothing).
        self.functions = {
            d.name: d
            for d in defs
            if isinstance(d, ast.FunctionDef)
            and bindings[d.name] == 1
            and id(d) not in methods
            and not d.decorator_list
            and not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(d.body))
        }
        #: Names bound to a value at run time (a call of one is a call by value).
        self.values = {
            n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        } | {n.arg for n in nodes if isinstance(n, ast.arg)}
        self.dynamic = any(_dynamic(n) for n in nodes)
        self.stopping: set = set()  # functions whose call may not return to the caller
        self.any_stopping = False  # then a call by value may reach one of them
        self._find_stopping(defs, [n for n in nodes if isinstance(n, ast.Lambda)])

    def _find_stopping(self, defs: list, lambdas: list) -> None:
        """Functions (by name) that may end the process or not return: their own
        ``raise``, ``sys.exit()``, ``forEachBatch``..., or a function they refer to that
        may, or a call by value once any may; until nothing new is found."""
        bodies = [(d.name, list(_own_nodes(d.body))) for d in defs]
        bodies += [(None, list(_own_nodes([n.body]))) for n in lambdas]
        pending = []
        for name, body in bodies:
            if any(self._own_stop(n, returns=False) for n in body):
                self._add_stopping(name)
            else:
                by_value = any(self._by_value(n) for n in body)
                pending.append((name, {_name(n) for n in body} - {None}, by_value))
        while True:
            left = [
                (name, names, by_value)
                for name, names, by_value in pending
                if not (names & self.stopping or (by_value and self.any_stopping))
            ]
            if len(left) == len(pending):
                return
            for name, names, by_value in pending:
                if names & self.stopping or (by_value and self.any_stopping):
                    self._add_stopping(name)
            pending = left

    def _add_stopping(self, name: Optional[str]) -> None:
        self.any_stopping = True
        if name is not None:
            self.stopping.add(name)

    def stops(self, node: ast.AST, frame: Optional[str]) -> bool:
        """Whether running the statement ``node`` may leave its block early, once
        records come when ``frame`` names the batch function's frame."""
        pending = [node]
        while pending:
            node = pending.pop()
            if isinstance(node, SCOPES):
                continue  # its body runs when called
            if self._own_stop(node, returns=True):
                return True
            if _name(node) in self.stopping or (self.any_stopping and self._by_value(node)):
                return True  # a stopping function referred to, or maybe called by value
            if isinstance(node, ast.If):
                body, orelse = branches(node.test, frame)
                if body or orelse:  # the other branch never runs once records come
                    pending += [node.test, *(node.body if body else node.orelse)]
                    continue
            pending.extend(ast.iter_child_nodes(node))
        return False

    @staticmethod
    def _own_stop(node: ast.AST, returns: bool) -> bool:
        """``raise``, a failing ``assert``, ``sys.exit()``, a call returning only once the
        query stops; ``return`` when ``returns``."""
        if isinstance(node, (ast.Raise, ast.Assert)) or (returns and isinstance(node, ast.Return)):
            return True
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            return func.attr in BLOCKING or (owner, func.attr) in EXIT_CALLS
        return isinstance(func, ast.Name) and (func.id in EXIT_NAMES or func.id in BLOCKING)

    def _by_value(self, node: ast.AST) -> bool:
        """A call of a value (``handlers[name](frame)``, ``getattr(...)()``, a name
        assigned at run time): which function it reaches is not known before."""
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in self.values
        return not isinstance(func, ast.Attribute)


class _Walk:
    """Collects the sure calls of blocks known to run, and the functions they run."""

    def __init__(self, script: _Script) -> None:
        self.script = script
        self.calls: set = set()
        self.called: set = set()  # functions surely called by name
        self.batch: set = set()  # functions surely handed to forEachBatch

    def block(self, statements: list, frame: Optional[str]) -> None:
        """``statements`` run in order until one may leave the block."""
        for statement in statements:
            self.visit(statement, frame)
            if self.script.stops(statement, frame):
                return

    def visit(self, node: ast.AST, frame: Optional[str]) -> None:
        """``node`` is sure to run: so are the parts of it that run whenever it does."""
        pending = [node]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.Call):
                self._call(node)
            if isinstance(node, ast.If):
                body, orelse = branches(node.test, frame)
                pending.append(node.test)
                self.block(node.body if body else [], frame)
                self.block(node.orelse if orelse else [], frame)
            elif isinstance(node, ast.IfExp):
                body, orelse = branches(node.test, frame)
                pending += [node.test] + [node.body] * body + [node.orelse] * orelse
            elif isinstance(node, TRIES):
                self.block(node.body + node.orelse, frame)  # the handlers: only on an error
                self.block(node.finalbody, frame)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                pending += [item.context_expr for item in node.items]
                self.block(node.body, frame)
            else:
                pending.extend(_run_with(node))

    def _call(self, call: ast.Call) -> None:
        self.calls.add(call)
        functions = self.script.functions
        if isinstance(call.func, ast.Name) and call.func.id in functions:
            self.called.add(functions[call.func.id])
        handed = _handed_batch_function(call)
        if isinstance(handed, ast.Name) and handed.id in functions:
            self.batch.add(functions[handed.id])


def _run_with(node: ast.AST) -> Iterator[ast.AST]:
    """The children of ``node`` that run whenever it does: not a function's or a class's
    body, a loop's body, a ``match`` case, a comprehension's element, the operands of
    ``and``/``or`` after the first, an ``assert``'s message."""
    if isinstance(node, (*FUNCTIONS, ast.Lambda)):
        yield from getattr(node, "decorator_list", [])
        yield from node.args.defaults
        yield from (d for d in node.args.kw_defaults if d is not None)
    elif isinstance(node, ast.ClassDef):
        yield from node.decorator_list
        yield from node.bases
        yield from (k.value for k in node.keywords)
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        yield node.iter
    elif isinstance(node, (ast.While, ast.Assert)):
        yield node.test  # an assert's message: only when it fails
    elif isinstance(node, ast.BoolOp):
        yield node.values[0]
    elif isinstance(node, COMPREHENSIONS):
        yield node.generators[0].iter
    elif type(node).__name__ == "Match":
        yield node.subject  # type: ignore[attr-defined]
    else:
        yield from ast.iter_child_nodes(node)


def branches(test: ast.expr, frame: Optional[str]) -> tuple:
    """Whether an ``if`` on ``test`` surely runs its body, and its ``else``: ``if
    __name__ == "__main__":``'s body; a size test's branch taken once records come."""
    if _main_test(test):
        return True, False
    sign = size_sign(test, frame)
    return sign > 0, sign < 0


def _name(node: ast.AST) -> Optional[str]:
    """The name ``node`` refers to: ``f`` for ``f`` and for ``obj.f``."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _main_test(test: ast.expr) -> bool:
    """``if __name__ == "__main__":``, which a job's script passes."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _handed_batch_function(call: ast.Call) -> Optional[ast.expr]:
    """The function ``call`` hands to a streaming query as its batch function."""
    method = method_name(call)
    if method not in BATCH_HANDOFFS:
        return None
    keyword, position = BATCH_HANDOFFS[method]
    given = next((k.value for k in call.keywords if k.arg == keyword), None)
    if given is None and position < len(call.args):
        given = call.args[position]
    return given


def _frame_parameter(function: ast.FunctionDef) -> Optional[str]:
    """A batch function's frame (its first parameter), unless it is bound again inside."""
    parameters = function.args.posonlyargs + function.args.args
    if not parameters:
        return None
    name = parameters[0].arg
    rebound = any(name in _bound_names(n) for n in _own_nodes(function.body, scopes=()))
    return None if rebound else name


def _own_nodes(statements: list, scopes: tuple = SCOPES) -> Iterator[ast.AST]:
    """Every node of ``statements``, not looking inside the nested ``scopes``."""
    pending: list = list(statements)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, scopes):
            pending.extend(ast.iter_child_nodes(node))


def _bound_names(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.alias) and node.name != "*":
        yield (node.asname or node.name).split(".")[0]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    else:  # match's capture patterns: MatchAs, MatchStar (name), MatchMapping (rest)
        for field in ("name", "rest"):
            value = getattr(node, field, None)
            if type(node).__name__.startswith("Match") and isinstance(value, str):
                yield value


def _dynamic(node: ast.AST) -> bool:
    """Whether ``node`` may bind the script's names where the tree does not show it."""
    if isinstance(node, ast.Name):
        return node.id in DYNAMIC_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in DYNAMIC_ATTRIBUTES
    if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
        module = node.module or ""
        return node.level > 0 or module.split(".")[0] not in KNOWN_STAR_IMPORTS
    return False
