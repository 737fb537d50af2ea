"""docs/porting-from-warp-sim.md keeps to the code: every name its mapping tables give in
the "ours" column exists, and every keyword it shows there is a parameter of that call.

The tables are those headed ``| warp.sim | newton | ours | difference |``.  In their "ours"
cells, each code span that starts with one of the roots below is a claim:
``builder.add_cloth_grid(pos, rot, ..., fix_left=, tri_ke=)`` says that the builder has
``add_cloth_grid`` and that it takes ``fix_left`` and ``tri_ke`` by keyword (positional
names are not checked); ``physics.JointType.D6`` that the chain of attributes exists;
``model.particle_q`` that a finalized model has it.  Spans with another start (``"z"``,
``xform=``) are plain text.  No solver is stepped: this only builds a tiny model.
"""

import importlib
import inspect
import os
import re

import pytest

import numba_sim as sim
from numba_sim import physics

DOC = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "porting-from-warp-sim.md")
HEADER = ["warp.sim", "newton", "ours", "difference"]
ROOTS = ("physics", "sim", "builder", "model", "state", "control", "contacts", "solver",
         "semi_implicit", "xpbd", "featherstone", "viewer")
SPAN = re.compile(r"`([^`]+)`")
CLAIM = re.compile(r"^(%s)((?:\.[A-Za-z_]\w*)+)" % "|".join(ROOTS))


def mapping_rows(text):
    """(line number, cells) of every data row of the doc's mapping tables."""
    rows, in_table = [], False
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells == HEADER:
            in_table = True
        elif in_table and not set(line) <= set("|-: "):
            rows.append((number, cells))
    return rows


def top_level_keywords(args):
    """The keyword names given at depth 0 of a call's argument text."""
    pieces, depth, current = [], 0, ""
    for ch in args:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += ch
    pieces.append(current)
    names = []
    for piece in pieces:
        match = re.match(r"\s*([A-Za-z_]\w*)\s*=(?!=)", piece)
        if match:
            names.append(match.group(1))
    return names


def claims(text):
    """(line, span, root, attribute chain, keywords) of every claim in the "ours" cells."""
    found = []
    for number, cells in mapping_rows(text):
        assert len(cells) == 4, f"line {number}: a mapping row needs 4 cells, got {cells}"
        for span in SPAN.findall(cells[2]):
            match = CLAIM.match(span)
            if not match:
                continue
            rest = span[match.end():]
            keywords = []
            if rest.startswith("("):
                depth = 0
                for end, ch in enumerate(rest):
                    depth += ch == "("
                    depth -= ch == ")"
                    if depth == 0:
                        break
                keywords = top_level_keywords(rest[1:end])
            found.append((number, span, match.group(1), match.group(2)[1:].split("."),
                          keywords))
    return found


@pytest.fixture(scope="module")
def doc_text():
    with open(DOC, encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def objects():
    """A tiny finalized model (a particle, a hinged box), its state, control and contacts,
    its builder, the solvers made on it (Featherstone on a model without the particle),
    and the viewer classes."""
    builder = physics.ModelBuilder()
    builder.add_particle((0.0, 0.0, 2.0), (0.0, 0.0, 0.0), 1.0, radius=0.05)
    body = builder.add_body(xform=((0.0, 0.0, 1.0), None))
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    builder.add_joint_revolute(-1, body, parent_xform=((0.0, 0.0, 1.0), None),
                               axis=(1.0, 0.0, 0.0))
    builder.add_ground_plane()
    model = builder.finalize()
    rigid = physics.ModelBuilder()
    link = rigid.add_body(xform=((0.0, 0.0, 1.0), None))
    rigid.add_shape_box(link, hx=0.1, hy=0.1, hz=0.1)
    rigid.add_joint_revolute(-1, link, axis=(1.0, 0.0, 0.0))
    solvers = {"semi_implicit": physics.SolverSemiImplicit(model),
               "xpbd": physics.SolverXPBD(model),
               "featherstone": physics.SolverFeatherstone(rigid.finalize())}
    return {"builder": [builder], "model": [model], "state": [model.state()],
            "control": [model.control()], "contacts": [model.contacts()],
            "solver": list(solvers.values()),
            **{name: [solver] for name, solver in solvers.items()}}


def resolve_module_chain(root_module, chain):
    """getattr along *chain* from *root_module*, importing submodules as needed."""
    obj, path = root_module, root_module.__name__
    for name in chain:
        path = f"{path}.{name}"
        if not hasattr(obj, name) and inspect.ismodule(obj):
            try:
                importlib.import_module(path)
            except ImportError as error:
                if error.name is not None and not path.startswith(error.name):
                    raise        # the submodule exists and fails to import
        obj = getattr(obj, name)
    return obj


def check_keywords(obj, keywords):
    if not keywords:
        return []
    try:
        parameters = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return []
    return [k for k in keywords if k not in parameters]


def targets(objects, root):
    if root == "physics":
        return [physics]
    if root == "sim":
        return [sim]
    if root == "viewer":
        viewer = importlib.import_module("numba_sim.physics.viewer")
        return [viewer.ViewerNull, viewer.ViewerUSD, viewer.ViewerImages]
    return objects[root]


def test_the_doc_has_its_mapping_tables(doc_text):
    rows = mapping_rows(doc_text)
    found = claims(doc_text)
    # a parse that found nothing would pass every check below
    assert len(rows) > 150, len(rows)
    assert len(found) > 200, len(found)
    assert {root for _, _, root, _, _ in found} >= {"physics", "builder", "model", "state",
                                                   "control", "contacts", "solver", "viewer"}


def test_every_name_the_doc_calls_ours_exists(doc_text, objects):
    missing = []
    for number, span, root, chain, keywords in claims(doc_text):
        try:
            owners = targets(objects, root)
        except (ImportError, AttributeError) as error:
            missing.append(f"line {number}: `{span}`: {error}")
            continue
        for owner in owners:
            try:
                if inspect.ismodule(owner):
                    obj = resolve_module_chain(owner, chain)
                else:
                    obj = owner
                    for name in chain:
                        obj = getattr(obj, name)
            except (AttributeError, ImportError) as error:
                label = getattr(owner, "__name__", type(owner).__name__)
                missing.append(f"line {number}: `{span}`: {label} has no "
                               f"{'.'.join(chain)} ({error})")
                continue
            unknown = check_keywords(obj, keywords)
            if unknown:
                missing.append(f"line {number}: `{span}`: takes no keyword {unknown}")
    assert not missing, "\n".join(missing)
