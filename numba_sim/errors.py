"""Short kernel-language errors: Numba's typing errors, told in a few lines.

Numba reports a kernel that does not type-check with pages of overload listings. The message
that says what is wrong is usually in there already, written by numba_sim's operation table
(``'*' between two vectors is ambiguous: use cw_mul(a, b) ...``) or by Numba (``Unknown
attribute 'foo' of type vec3``). :func:`short_typing_error` digs it out with the place it
points at and raises :class:`KernelTypingError`::

    File "/home/me/sim.py", line 21, in bad
        y[i] = sim.dot(x[i])
    kernel bad: dot(vec3): expected dot(vector, vector) or dot(quat, quat)

As in a Python traceback, the place comes first and the message last (so that a pattern
anchored with ``$``, as Warp's tests write them, matches the message); a note that Python
prints under it says where Numba's full text is.

``NUMBA_SIM_VERBOSE_ERRORS=1`` keeps Numba's own exception, unchanged.
"""

import inspect
import linecache
import os
import re

import numba
from numba.core.errors import TypingError

from numba_sim.debug_checks import FIELDS

VERBOSE_VARIABLE = "NUMBA_SIM_VERBOSE_ERRORS"
HINT = f"(Numba's full message: the exception's .numba_message, or {VERBOSE_VARIABLE}=1)"

_AUTHORED = re.compile(r"^( *)TypingError: (.+)\n\s*raised from (.+?):\d+", re.MULTILINE)
_LOCATION = re.compile(r'File "(.+?)", line (\d+):\n((?:.*\n)*?)\s*\^')
_SIGNATURE = re.compile(r"No implementation of function .*? found for signature:\s*\n\s*\n?\s*>>> (.+)")
_PIPELINE = re.compile(r"^(Failed in .* pipeline .*|During: .*|\s*)$")
_NAME_ERROR = re.compile(r"NameError: name '(\w+)' is not defined")
_INTERNAL_CALLS = {  # the kernel language's own helpers, told as the code the user wrote
    "store_item": "cannot store a {2} into an element of {0} (index {1}): the value must have "
                  "the array's dtype",
    "load_item": "cannot read {0} at index {1}",
}


_NUMBA_SIM = os.path.dirname(os.path.abspath(__file__))
_NUMBA = os.path.dirname(os.path.abspath(numba.__file__))


def _in_package(path, *packages):
    path = os.path.abspath(path)
    return any(path.startswith(package + os.sep) for package in packages)


class WarpCodegenError(RuntimeError):
    """Warp's class of kernel compile errors (``wp.WarpCodegenError``): Warp code that catches
    it catches numba_sim's :class:`KernelTypingError`."""


class WarpCodegenTypeError(TypeError):
    """Warp's ``WarpCodegenTypeError``; a :class:`KernelTypingError` is one."""


class WarpCodegenValueError(ValueError):
    """Warp's ``WarpCodegenValueError``; a :class:`KernelTypingError` is one."""


class KernelTypingError(TypingError, WarpCodegenError, WarpCodegenTypeError,
                        WarpCodegenValueError):
    """A kernel or func that does not type-check, in a few lines.

    Also each of Warp's kernel compile error classes (``WarpCodegenError``, ``...TypeError``,
    ``...ValueError``), which Warp raises for what Numba reports as a typing error, so
    that Warp code's ``except`` clauses and its tests' ``assertRaises`` catch it.

    ``numba_message`` holds Numba's full text; ``kernel``, ``filename`` and ``lineno`` where it
    is (``filename`` None when Numba gave no place and the name was not found in the source).
    """

    def __init__(self, message, numba_message, kernel, filename, lineno):
        super().__init__(message, highlighting=False)
        self.add_note(HINT)
        self.numba_message = numba_message
        self.kernel = kernel
        self.filename = filename
        self.lineno = lineno

    def __reduce__(self):
        return (type(self), (str(self), self.numba_message, self.kernel, self.filename,
                             self.lineno))


class UndefinedSymbolError(KernelTypingError, KeyError):
    """A kernel or func that reads a name nothing defines: also a KeyError, as Warp's
    ``Referencing undefined symbol`` is (raised when the kernel is built, so a branch that
    ``sim.static`` drops may name what does not exist)."""

    __str__ = BaseException.__str__  # the message, not KeyError's repr of it


class MissingAttributeError(KernelTypingError, AttributeError):
    """A kernel or func that reads a field a struct does not have: also an AttributeError, as
    Warp's is."""


_STRUCT_ATTRIBUTE = re.compile(r"Unknown attribute '(\w+)' of type struct\(([\w.]+)\)")


def verbose():
    return os.environ.get(VERBOSE_VARIABLE, "") not in ("", "0")


def short_typing_error(kernel, error):
    """The KernelTypingError for Numba's TypingError ``error`` raised compiling ``kernel``
    (``error`` itself when verbose errors are asked for)."""
    if verbose() or isinstance(error, KernelTypingError):
        return error
    text = str(error)
    name = getattr(kernel, "__name__", str(kernel))
    filename, lineno, source, function = _where(text, kernel)
    lines = []
    if filename is not None:
        lines.append(f'File "{filename}", line {lineno}, in {function or name}')
        if source:
            lines.append(f"    {source}")
    undefined = _NAME_ERROR.search(text)
    if undefined and _what(text).startswith("NameError"):
        lines.append(f"kernel {name}: Referencing undefined symbol: {undefined.group(1)} "
                     f"(NameError: name '{undefined.group(1)}' is not defined)")
        return UndefinedSymbolError("\n".join(lines), text, name, filename, lineno)
    what = _what(text)
    missing = _STRUCT_ATTRIBUTE.match(what)
    if missing:  # Warp's sentence, and an AttributeError as Warp's is
        attribute, struct = missing.groups()
        owner = re.search(rf"(\w+)\s*\.\s*{attribute}\b", source or "")
        owner = f"'{owner.group(1)}' " if owner else ""
        lines.append(f"kernel {name}: `{attribute}` is not an attribute of {owner}({struct})")
        return MissingAttributeError("\n".join(lines), text, name, filename, lineno)
    lines.append(f"kernel {name}: {what}")
    return KernelTypingError("\n".join(lines), text, name, filename, lineno)


_TID_UNPACK = re.compile(r"wrong tuple length for \w*__sim_tid__\W+expected (\d+), got (\d+)")


def _what(text):
    """The sentence that says what is wrong."""
    unpack = _TID_UNPACK.search(text)
    if unpack:
        wanted, dims = unpack.groups()
        return (f"sim.tid() is unpacked into {wanted} indices but the launch has {dims} "
                f"dimension{'s' if dims != '1' else ''}: launch with a dim of {wanted} sizes "
                f"(dim=(n0, n1{', ...' if wanted != '2' else ''})), or unpack {dims}")
    # the innermost (most indented) message, preferring numba_sim's own; among siblings (the
    # forms of one builtin that all refused), the first: the builtin's main form
    authored = [(len(m.group(1)), m.group(2).strip(), _in_package(m.group(3), _NUMBA_SIM))
                for m in _AUTHORED.finditer(text)]
    ours = [entry for entry in authored if entry[2]] or authored
    if ours:
        deepest = max(depth for depth, _, _ in ours)
        return next(message for depth, message, _ in ours if depth == deepest)
    signature = _SIGNATURE.search(text)
    if signature:
        function, _, args = signature.group(1).strip().partition("(")
        template = _INTERNAL_CALLS.get(function)
        arguments = _split_arguments(args[:-1])
        if template and template.count("{") <= len(arguments):
            return template.format(*arguments)
        return f"no {function} takes ({args}"
    for line in text.splitlines():
        if not _PIPELINE.match(line):
            return line.strip()
    return text.strip()


def debug_error(kernel, error):
    """The sentence for a debug-mode check's ``(template, line, values...)`` exception
    (debug_checks.py): the same exception type, its message the filled-in template with the
    source line, the values as attributes (``index``, ``extent``, ``dimension``,
    ``lineno``); None for any other exception."""
    fields = FIELDS.get(type(error))
    args = error.args
    if fields is None or len(args) != 2 + len(fields) or not isinstance(args[0], str) \
            or not isinstance(args[1], int):
        return None
    values = dict(zip(fields, args[2:]))
    if isinstance(values["index"], tuple) and len(values["index"]) == 1:
        values["index"] = values["index"][0]
    lines = [args[0].format(**values)]
    function = getattr(kernel, "py_func", None)
    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    if filename:
        lines.append(f'  File "{filename}", line {args[1]}, in {kernel.__name__}')
        source = linecache.getline(filename, args[1]).strip()
        if source:
            lines.append(f"    {source}")
    formatted = type(error)("\n".join(lines))
    formatted.lineno, formatted.filename = args[1], filename
    for name, value in values.items():
        setattr(formatted, name, value)
    return formatted


def _split_arguments(text):
    """'array(float32, 1d, C), int32, vec3' -> the three top-level parts."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return parts + ([current.strip()] if current.strip() else [])


def _where(text, kernel):
    """(file, line, source line, function) that Numba's message points at: the innermost
    place, or, for a name Numba could not resolve (it gives no place), the kernel's first
    line using it."""
    places = [(os.path.abspath(path), lineno, context)
              for path, lineno, context in _LOCATION.findall(text)]
    users = [place for place in places if not _in_package(place[0], _NUMBA_SIM, _NUMBA)]
    if places:
        path, lineno, context = (users or places)[0]
        source = [line for line in context.splitlines() if line.strip() and
                  line.strip() != "<source elided>"]
        function = re.match(r"\s*def (\w+)", source[0]) if source else None
        return (path, int(lineno), source[-1].strip() if source else "",
                function.group(1) if function else None)
    name = _NAME_ERROR.search(text)
    function = getattr(kernel, "py_func", None)
    code = getattr(function, "__code__", None)
    if name and code is not None:
        try:
            lines, first = inspect.getsourcelines(function)
        except (OSError, TypeError):
            return None, None, None, None
        pattern = re.compile(rf"\b{name.group(1)}\b")
        for offset, line in enumerate(lines):
            if pattern.search(line) and not line.lstrip().startswith(("def ", "@")):
                return code.co_filename, first + offset, line.strip(), function.__name__
    return None, None, None, None
