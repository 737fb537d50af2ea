"""Run every notebook in notebooks/ top to bottom and save it with its outputs.

The committed notebooks carry their outputs, so that they read well where no kernel runs
(GitHub, a docs page). Outputs stay small: an output bigger than MAX_OUTPUT_BYTES (an inline
animation, say) is replaced by a line saying where it comes from, and the notebook's own
static pictures show the result instead. tests/test_notebooks.py checks what this leaves.

    python tools/execute_notebooks.py [NAME ...]      # all notebooks, or those named
"""

import argparse
import json
import pathlib
import sys

import nbclient
import nbformat

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
MAX_OUTPUT_BYTES = 200_000


def trimmed(output):
    """The output, or a short stream line when it is bigger than MAX_OUTPUT_BYTES."""
    size = len(json.dumps(output))
    if size <= MAX_OUTPUT_BYTES:
        return output
    kinds = ", ".join(sorted(output.get("data", {}))) or output.get("output_type")
    return nbformat.v4.new_output(
        "stream", name="stdout",
        text=f"[{kinds} output of {size // 1000} kB left out of the saved notebook; "
             "run the cell to see it]\n")


def execute(path):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=1800, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [trimmed(output) for output in cell.outputs]
            errors = [o for o in cell.outputs if o.get("output_type") == "error"]
            if errors:
                raise RuntimeError(f"{path.name}: a cell failed: {errors[0].get('evalue')}")
    nbformat.write(notebook, path)
    print(f"{path.name}: {path.stat().st_size // 1000} kB with outputs")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook names (without .ipynb); default: all")
    args = parser.parse_args(argv)
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.names:
        paths = [p for p in paths if p.stem in args.names]
        if not paths:
            sys.exit(f"no notebook named {args.names} in {NOTEBOOKS}")
    for path in paths:
        execute(path)


if __name__ == "__main__":
    main()
