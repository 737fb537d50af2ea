"""Collection of the ported Warp suite (tools/port_warp_tests.py).

- It is unittest code: its cases are the methods Warp's helpers register on
  ``unittest.TestCase`` classes.  Module-level ``test_*`` functions there are the bodies
  those helpers register (they take Warp's ``(test, device)`` arguments), not pytest
  tests, so only TestCase classes are collected.
- A ported file that fails to import (a name numba_sim does not have yet, used at module
  level) is one failing test, ``<file>::import``, carrying the error: it must not stop
  the collection of the rest of the suite (pytest interrupts a session on any collection
  error).
- The cases that failed in the last ``python tools/port_warp_tests.py --report`` run
  (``known_failures.json``, with their causes; the table of docs/warp-compatibility.md) are
  expected to fail here (``xfail``, not strict), so that the normal suite is red only for
  a regression: a case that passed and fails now.  A known failure that passes shows as
  XPASS; rerun ``--report`` to record the progress.  Their tracebacks are formatted as
  Python prints them (``_native_repr_failure``).  ``--report`` itself runs the suite with
  ``WARP_SUITE_TRUE_OUTCOMES=1``, which turns this off.
"""

import json
import os
import unittest
from pathlib import Path

import pytest

KNOWN_FAILURES = Path(__file__).with_name("known_failures.json")


def _known_failures():
    if os.environ.get("WARP_SUITE_TRUE_OUTCOMES") or not KNOWN_FAILURES.exists():
        return {}
    return json.loads(KNOWN_FAILURES.read_text())


def pytest_collection_modifyitems(config, items):
    known = _known_failures()
    for item in items:
        failures = known.get(item.path.name)
        if not failures or "warp_suite" not in item.path.parts:
            continue
        key = item.name if isinstance(item, ImportFailed) else f"{item.parent.name}.{item.name}"
        cause = failures.get(key) or failures.get("*")
        if cause is not None:
            item.add_marker(pytest.mark.xfail(
                reason=f"known failure (docs/warp-compatibility.md): {cause}", strict=False))
            item.repr_failure = _native_repr_failure


def _native_repr_failure(excinfo):
    """A known failure's traceback, as Python prints it.  pytest's own style reparses the
    whole source file of every frame (``getstatementrange_ast``): for the 3,500-line ported
    files that cost seconds per expected failure, for a report that ``-rx`` does not show."""
    return excinfo.getrepr(style="native")


def pytest_pycollect_makeitem(collector, name, obj):
    if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
        return None  # pytest's own unittest collection
    return []


class ImportFailed(pytest.Item):
    """Stands for the cases of a ported module that could not be imported."""

    def __init__(self, *, error, **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def runtest(self):
        raise ImportError(f"the ported module failed to import: {self.error}")

    def repr_failure(self, excinfo):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::import"


class PortedModule(pytest.Module):
    def collect(self):
        try:
            return list(super().collect())
        except self.CollectError as error:  # pytest's wrapping of an ImportError
            lines = [line for line in str(error).splitlines() if line.strip()]
            message = lines[-1] if lines else repr(error)
        except Exception as error:  # anything else the module raised at import
            message = f"{type(error).__name__}: {error}".splitlines()[0]
        return [ImportFailed.from_parent(self, name="import", error=message)]


def pytest_pycollect_makemodule(module_path, parent):
    if module_path.name.startswith("test_"):
        return PortedModule.from_parent(parent, path=module_path)
    return None
