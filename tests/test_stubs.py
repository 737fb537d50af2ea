"""numba_sim/__init__.pyi: generated from the value and operation tables, kept in sync, and
naming every public name (numba_sim's, and those API.md lists)."""

import ast
import os
import re

import pytest

import numba_sim as sim
from numba_sim import _stubs

API_MD = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "API.md")

NOT_YET_IMPLEMENTED = set()
"""API.md's autodiff names (issue 24): they join the stub when they land."""


def stub_names():
    with open(_stubs.stub_path()) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_the_committed_stub_is_what_the_tables_give():
    assert _stubs.main(["--check"]) == 0, "run: python -m numba_sim._stubs"


def test_the_stub_names_every_public_name():
    names = stub_names()
    assert set(sim.__all__) <= names, sorted(set(sim.__all__) - names)
    for alias in ("vec3", "vec3f", "vec3d", "vec3i", "mat33", "mat33d", "quat", "quatd",
                  "transform", "transformd", "dot", "quat_rotate", "hash_grid_query"):
        assert alias in names


@pytest.mark.skipif(not os.path.exists(API_MD), reason="API.md is in the shared folder beside "
                    "the checkout, which this machine does not have")
def test_the_stub_names_every_name_api_md_lists():
    with open(API_MD) as f:
        text = f.read()
    builtins_section = text.split("## Builtins", 1)[1].split("\n## ", 1)[0]
    listed = {name for block in re.findall(r"`([^`]+)`", builtins_section)
              if len(block.split()) > 1
              and all(re.fullmatch(r"[a-z_][a-z0-9_]*", word) for word in block.split())
              for name in block.split()}  # the lists of names, such as `dot cross length`
    listed |= set(re.findall(r"\bsim\.([A-Za-z_][A-Za-z0-9_]*)", text))
    assert len(listed) > 80
    names = stub_names()
    assert listed - NOT_YET_IMPLEMENTED <= names, sorted(listed - NOT_YET_IMPLEMENTED - names)
    assert not NOT_YET_IMPLEMENTED & set(sim.__all__), "implemented: drop them from the list"
