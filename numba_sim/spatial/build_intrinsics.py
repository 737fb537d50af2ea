"""Intrinsics by which the CUDA builds' kernels run the steps of cuda_src/.

The kernels of ``hash_grid_build_cuda.py``, ``bvh_build_cuda.py`` and
``mesh_build_cuda.py`` are plain numba-cuda Python; where a step is the same
code as the host build's or the queries' (the cell of a point, a Morton code,
a Karras node, a triangle's box ...), they call the entry point of
``cuda_src/*_entry_points.h`` through one of these intrinsics, one element
per thread. On CUDA the entry point is LTO-inlined into the kernel
(:mod:`numba_sim.native`). Arrays are passed as their data pointers,
structures (a ``uint64`` id) as ``void*``.
"""

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from numba_sim import native

#: ``void*`` / ``char*``: how the entry points take structures and opaque states.
BYTE_POINTER = ir.IntType(8).as_pointer()

_VOID = ir.VoidType()
_I32 = ir.IntType(32)
_F32 = ir.FloatType()


def array_pointer(context, builder, array_type, array, element=_F32):
    """The data pointer of an array value, as ``element*``."""
    data = context.make_array(array_type)(context, builder, value=array).data
    return builder.bitcast(data, element.as_pointer())


def _pointer_args(context, builder, signature, args, elements):
    """Arguments for the entry point: per ``elements[i]``, an array's data pointer
    (its pointee LLVM type), ``"handle"``: a uint64 id as ``void*``, None: as is."""
    out = []
    for array_type, value, element in zip(signature.args, args, elements):
        if element is None:
            out.append(value)
        elif element == "handle":
            out.append(builder.inttoptr(value, BYTE_POINTER))
        else:
            out.append(array_pointer(context, builder, array_type, value, element))
    return out


def native_intrinsic(name, return_type, argument_types, elements):
    """An intrinsic's typer calling entry point ``name`` (void or int32).

    ``argument_types``: Numba types (None: any array, typed as given);
    ``elements``: per argument, as :func:`_pointer_args`.
    """

    def typer(typingctx, *args):
        sig = return_type(*[a if t is None else t for a, t in zip(args, argument_types)])

        def codegen(context, builder, signature, llargs):
            llvm_return = _I32 if return_type == types.int32 else _VOID
            call = native.call_native(context, builder, name, llvm_return,
                                      _pointer_args(context, builder, signature, llargs, elements))
            return call if return_type == types.int32 else context.get_dummy_value()

        return sig, codegen

    return typer


# --------------------------------------------------------------------------
# Hash grid (hash_grid_build_cuda.py)


@intrinsic
def native_point_cells(typingctx, grid_id, points, begin, end, cells):
    """``cells[i] = cell of points[i]`` for i in [begin, end) (points: (n, 3) float32, C order)."""
    return native_intrinsic("sim_hash_grid_point_cells", types.void,
                            [types.uint64, None, types.int32, types.int32, None],
                            ["handle", _F32, None, None, _I32])(
        typingctx, grid_id, points, begin, end, cells)


@intrinsic
def native_set_grid(typingctx, grid_id, dim_x, dim_y, dim_z, num_points, cell_width,
                    point_ids, cell_offsets):
    """Fill the descriptor at ``grid_id`` (dims, point count, cell width, buffers)."""
    return native_intrinsic("sim_hash_grid_set", types.void,
                            [types.uint64] + [types.int32] * 4 + [types.float32, None, None],
                            ["handle", None, None, None, None, None, _I32, _I32])(
        typingctx, grid_id, dim_x, dim_y, dim_z, num_points, cell_width, point_ids, cell_offsets)


@intrinsic
def native_set_grid_groups(typingctx, grid_id, sorted_groups):
    """Make the grid at ``grid_id`` grouped by ``sorted_groups`` (int32, per sorted position)."""
    return native_intrinsic("sim_hash_grid_set_groups", types.void, [types.uint64, None],
                            ["handle", _I32])(typingctx, grid_id, sorted_groups)


# --------------------------------------------------------------------------
# Bvh (bvh_build_cuda.py)


@intrinsic
def native_morton_code(typingctx, lowers, uppers, i, origin, inv_extent):
    """Morton code of item i's box centre (``sim_bvh_morton_code``)."""
    return native_intrinsic("sim_bvh_morton_code", types.int32,
                            [None, None, types.int32, None, None],
                            [_F32, _F32, None, _F32, _F32])(typingctx, lowers, uppers, i, origin,
                                                            inv_extent)


@intrinsic
def native_lbvh_build_node(typingctx, codes, n, i, nodes, parents, ranges):
    """Karras slot i (``sim_lbvh_build_node``); nodes is an int32 array of 8 per node."""
    return native_intrinsic("sim_lbvh_build_node", types.void,
                            [None, types.int32, types.int32, None, None, None],
                            [_I32, None, None, _I32, _I32, _I32])(typingctx, codes, n, i, nodes,
                                                                  parents, ranges)


@intrinsic
def native_lbvh_finish_node(typingctx, nodes, parents, ranges, n, leaf_size, s, is_leaf):
    """Finish slot s (``sim_lbvh_finish_node``): its refit group or -1; is_leaf[0] set."""
    return native_intrinsic("sim_lbvh_finish_node", types.int32,
                            [None, None, None, types.int32, types.int32, types.int32, None],
                            [_I32, _I32, _I32, None, None, None, _I32])(
        typingctx, nodes, parents, ranges, n, leaf_size, s, is_leaf)


@intrinsic
def native_refit_level_node(typingctx, bvh_id, k, i):
    """Refit node i of refit group k of the tree at bvh_id (``sim_bvh_refit_level_node``)."""
    return native_intrinsic("sim_bvh_refit_level_node", types.void,
                            [types.uint64, types.int32, types.int32],
                            ["handle", None, None])(typingctx, bvh_id, k, i)


@intrinsic
def native_set_bvh(typingctx, bvh_id, nodes, primitive_indices, refit_order, level_offsets,
                   lowers, uppers, counts):
    """Fill the descriptor at bvh_id (``sim_bvh_set``)."""
    return native_intrinsic("sim_bvh_set", types.void,
                            [types.uint64, None, None, None, None, None, None, None],
                            ["handle", _I32, _I32, _I32, _I32, _F32, _F32, _I32])(
        typingctx, bvh_id, nodes, primitive_indices, refit_order, level_offsets, lowers, uppers,
        counts)


# --------------------------------------------------------------------------
# Mesh (mesh_build_cuda.py)


def _mesh_face_intrinsic(name, doc):
    """An intrinsic ``(mesh_id, face)``: the per-face step ``name`` of the mesh at mesh_id."""

    def typer(typingctx, mesh_id, face):
        return native_intrinsic(name, types.void, [types.uint64, types.int32],
                                ["handle", None])(typingctx, mesh_id, face)

    typer.__name__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


native_triangle_bounds = _mesh_face_intrinsic(
    "sim_mesh_triangle_bounds", "The box of face f of the mesh at mesh_id.")
native_add_vertex_normals = _mesh_face_intrinsic(
    "sim_mesh_add_vertex_normals", "Face f's share of its vertices' normals (atomics).")
native_leaf_triangle = _mesh_face_intrinsic(
    "sim_mesh_leaf_triangle", "The points of the triangle at BVH position i, in leaf order.")


@intrinsic
def native_solid_angle_level_node(typingctx, mesh_id, k, i):
    """The solid-angle expansion of node i of refit level k of the mesh at mesh_id."""
    return native_intrinsic("sim_mesh_solid_angle_level_node", types.void,
                            [types.uint64, types.int32, types.int32], ["handle", None, None])(
        typingctx, mesh_id, k, i)


@intrinsic
def native_set_mesh(typingctx, mesh_id, points, indices, tri_lowers, tri_uppers, edge_faces,
                    vertex_normals, leaf_points, num_points, num_tris):
    """Fill the mesh part of the descriptor at mesh_id (``sim_mesh_set``)."""
    return native_intrinsic("sim_mesh_set", types.void,
                            [types.uint64] + [None] * 7 + [types.int32, types.int32],
                            ["handle", _F32, _I32, _F32, _F32, _I32, _F32, _F32, None, None])(
        typingctx, mesh_id, points, indices, tri_lowers, tri_uppers, edge_faces, vertex_normals,
        leaf_points, num_points, num_tris)
