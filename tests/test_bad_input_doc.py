"""docs/bad-input.md names a test for every bad input; each of those tests exists."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).parent.parent
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def _test_names(path):
    tree = ast.parse((ROOT / path).read_text())
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def test_every_row_names_an_existing_test():
    table_rows = [line for line in (ROOT / "docs" / "bad-input.md").read_text().splitlines()
                  if line.startswith("| ") and not line.startswith("| bad input")]
    assert len(table_rows) >= 40
    missing = []
    for row in table_rows:
        references = REFERENCE.findall(row)
        assert references, f"row without a test: {row}"
        for path, name in references:
            if not (ROOT / path).exists() or name not in _test_names(path):
                missing.append(f"{path}::{name}")
    assert not missing, missing
