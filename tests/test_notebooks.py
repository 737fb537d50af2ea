"""Every notebook runs top to bottom on the CPU (small sizes) and its assertions hold."""

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_SIM_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert not errors


def test_there_are_the_six_notebooks():
    assert {p.stem for p in NOTEBOOKS} == {"quickstart", "hash_grid_neighbours", "dem_animation",
                                           "numba_cupy_interop", "cloth_and_softbody", "robot"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_carries_small_outputs(path):
    """Saved with outputs by tools/execute_notebooks.py, so it reads well without a kernel."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.get("execution_count") for cell in code), "a cell was never run"
    assert any(cell.get("outputs") for cell in code), "no outputs saved"
    assert not [o for cell in code for o in cell.outputs if o.get("output_type") == "error"]
    assert path.stat().st_size < 300_000, f"{path.name} is {path.stat().st_size} bytes"
