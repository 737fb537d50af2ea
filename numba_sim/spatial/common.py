"""What the spatial structures (HashGrid, Bvh, Mesh) share on the host side.

The lowest module of ``numba_sim/spatial``: it imports nothing of the
structures, nor of numba_sim's typing or lowering, so that a structure's
module, its query module and its CUDA build can all import it.

* :data:`host_functions` - the one loader of the host library's entry points
  (``cuda_src/*_entry_points.h`` and ``*_host_build.cpp``), called from Python
  through ctypes (which releases the GIL during a call);
* the layouts of cuda_src's structs that Python allocates or reads (the
  tests check them against the ``sim_*_layout()`` entry points);
* :class:`SpatialStructure` - ``id`` and how compiled code receives a
  structure; :class:`RefittableStructure` adds ``refit`` (Bvh, Mesh);
* :data:`cpu_structures` and :func:`cpu_structure` - the live CPU structures
  by ``id``, for the query builtins run as Python;
* argument checks whose messages name the call and the argument; devices come
  from :func:`numba_sim.arrays.device_of`.

A new structure follows the same pattern: its entry points in
``cuda_src/<name>_entry_points.h`` (included by ``entry_points.cpp``) and in
:data:`host_functions`, a ``SpatialStructure`` subclass in ``<name>.py``, the
Python-mode builtins in ``<name>_query.py``, the CUDA build in
``<name>_build_cuda.py`` (its intrinsics in ``build_intrinsics.py``), and
the typing and lowering in ``numba_sim/typing/<name>.py`` and
``numba_sim/lowering/<name>.py``, registered by ``numba_sim/_registration.py``.
"""

import ctypes
import operator
import threading
import weakref

import numpy as np

from numba_sim import arrays, native

POINTER, INT, FLOAT = ctypes.c_void_p, ctypes.c_int, ctypes.c_float

#: Index and count limit of Bvh and Mesh inputs: trees have 2n - 1 int32-indexed nodes.
MAX_ITEMS = 2**30


# --------------------------------------------------------------------------
# The host library's entry points


class HostFunctions:
    """Entry points of the host library, from ``{name: (argument types, result type)}``.

    ``functions[name]`` is the ctypes function, loaded at its first use.
    """

    def __init__(self, signatures):
        self._signatures = signatures
        self._functions = {}
        self._lock = threading.Lock()

    def __getitem__(self, name):
        function = self._functions.get(name)
        if function is None:
            with self._lock:
                function = getattr(ctypes.CDLL(native.host_library_path()), name)
                function.argtypes, function.restype = self._signatures[name]
                self._functions[name] = function
        return function


#: Every entry point Python calls, by header (compiled code calls them by name
#: through numba_sim.native instead).
host_functions = HostFunctions({
    # cuda_src/hashgrid_entry_points.h and hashgrid_host_build.cpp
    "sim_hash_grid_layout": ([POINTER], None),
    "sim_hash_grid_set": ([POINTER] + [INT] * 4 + [FLOAT] + [POINTER] * 2, None),
    "sim_hash_grid_query_begin": ([POINTER, POINTER, POINTER, FLOAT], None),
    "sim_hash_grid_query_begin_group": ([POINTER, POINTER, POINTER, FLOAT, INT], None),
    "sim_hash_grid_query_next_group_range": ([POINTER], INT),
    "sim_hash_grid_query_next_range": ([POINTER], INT),
    "sim_hash_grid_set_groups": ([POINTER, POINTER], None),
    "sim_hash_grid_group_host": ([POINTER, POINTER, ctypes.c_longlong] + [POINTER] * 3, INT),
    "sim_hash_grid_point_id": ([POINTER, INT], INT),
    "sim_hash_grid_build_host":
        ([POINTER, POINTER, INT, INT, INT, INT, FLOAT, POINTER, POINTER, INT, POINTER, INT], INT),
    # cuda_src/bvh_entry_points.h and bvh_host_build.cpp
    "sim_bvh_layout": ([POINTER], None),
    "sim_bvh_counts": ([POINTER, POINTER], None),
    "sim_bvh_query_aabb_begin": ([POINTER] * 4 + [INT], None),
    "sim_bvh_query_ray_begin": ([POINTER] * 4 + [INT], None),
    "sim_bvh_query_sphere_begin": ([POINTER] * 4 + [INT], None),
    "sim_bvh_query_sphere_next": ([POINTER], INT),
    "sim_bvh_query_capsule_begin": ([POINTER] * 5 + [INT], None),
    "sim_bvh_query_capsule_next": ([POINTER], INT),
    "sim_bvh_query_set_max_dist": ([POINTER, FLOAT], None),
    "sim_mesh_query_sphere_begin": ([POINTER] * 4 + [INT], None),
    "sim_mesh_query_sphere_next": ([POINTER], INT),
    "sim_mesh_get_bvh": ([POINTER], POINTER),
    "sim_bvh_group_root": ([POINTER, INT], INT),
    "sim_bvh_query_aabb_next": ([POINTER], INT),
    "sim_bvh_query_ray_next": ([POINTER], INT),
    "sim_bvh_build_host": ([POINTER] * 3 + [INT] * 3 + [POINTER] * 4 + [INT] + [POINTER] * 3,
                           None),
    "sim_bvh_refit_host": ([POINTER], None),
    "sim_bvh_stats": ([POINTER, INT, INT, POINTER], None),
    # cuda_src/mesh_entry_points.h and mesh_host_build.cpp
    "sim_mesh_layout": ([POINTER], None),
    "sim_mesh_set": ([POINTER] * 8 + [INT, INT], None),
    "sim_mesh_set_points": ([POINTER, POINTER], None),
    "sim_mesh_query_point": ([POINTER, POINTER, FLOAT, POINTER], INT),
    "sim_mesh_query_ray": ([POINTER, POINTER, POINTER, FLOAT, POINTER, INT], INT),
    "sim_mesh_get_group_root": ([POINTER, INT], INT),
    "sim_mesh_query_ray_anyhit": ([POINTER, POINTER, POINTER, FLOAT, INT], INT),
    "sim_mesh_query_ray_count_intersections": ([POINTER, POINTER, POINTER, INT], INT),
    "sim_mesh_query_point_sign_parity": ([POINTER, POINTER, FLOAT, INT, FLOAT, POINTER], INT),
    "sim_mesh_query_point_no_sign": ([POINTER, POINTER, FLOAT, POINTER], INT),
    "sim_mesh_query_furthest_point_no_sign": ([POINTER, POINTER, FLOAT, POINTER], INT),
    "sim_mesh_query_point_sign_normal": ([POINTER, POINTER, FLOAT, FLOAT, POINTER], INT),
    "sim_mesh_query_point_sign_winding_number":
        ([POINTER, POINTER, FLOAT, FLOAT, FLOAT, POINTER], INT),
    "sim_mesh_winding_number": ([POINTER, POINTER, FLOAT], FLOAT),
    "sim_mesh_query_aabb_begin": ([POINTER] * 4 + [INT], None),
    "sim_mesh_eval_position": ([POINTER, INT, FLOAT, FLOAT, POINTER], None),
    "sim_mesh_eval_velocity": ([POINTER, INT, FLOAT, FLOAT, POINTER], None),
    "sim_mesh_edge_faces": ([POINTER, INT, INT, POINTER], None),
    "sim_mesh_build_host": ([POINTER, INT, INT] + [POINTER] * 4 + [INT] + [POINTER] * 3,
                            None),
    "sim_mesh_prepare_signs": ([POINTER], None),
    "sim_mesh_refit_host": ([POINTER, INT], None),
})


# --------------------------------------------------------------------------
# Layouts of cuda_src's structs (checked against sim_*_layout() by the tests)

#: ``sizeof(sim::HashGrid)`` in 8-byte words; ``sizeof(sim::HashGridQuery)``.
HASH_GRID_WORDS = 6
HASH_GRID_QUERY_BYTES = 168

#: ``sizeof(sim::Bvh)`` in 8-byte words; ``sizeof(sim::BvhQuery)``.
BVH_WORDS = 12
#: The descriptor's words that a grouped build fills (constructor | num_groups << 32,
#: group_ids, group_roots): ``offsetof(sim::Bvh, constructor) / 8``.
BVH_GROUP_WORDS = 9
BVH_QUERY_BYTES = 184
#: Depth levels of a tree's ``refit_order`` (the depth limit, 31, plus one).
BVH_LEVELS = 32
#: Constructor name -> Warp's BvhConstructor number (as cuda_src/bvh.h).
BVH_CONSTRUCTORS = {"sah": 0, "median": 1, "lbvh": 2}

#: ``sizeof(sim::Mesh)`` in 8-byte words; ``offsetof(sim::Mesh, bvh)``; ``sizeof(sim::MeshHit)``
#: (t, u, v, sign, normal x 3 as float32, face as int32).
MESH_WORDS = 23
MESH_BVH_OFFSET = 64
#: ``offsetof(sim::Mesh, edge_length_sum)`` and ``offsetof(sim::Mesh, solid_angle_props)``
#: (bytes); ``sizeof(sim::SolidAngleProps)`` in floats (one per BVH node slot).
MESH_EDGE_LENGTH_SUM_OFFSET = 160
MESH_SOLID_ANGLE_OFFSET = 168
#: ``offsetof(sim::Mesh, velocities)`` (bytes).
MESH_VELOCITIES_OFFSET = 176
SOLID_ANGLE_PROPS_FLOATS = 36
MESH_HIT_BYTES = 32


def aligned_zeros(shape, dtype, alignment=64):
    """A zeroed NumPy array whose data starts at a multiple of ``alignment`` bytes."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(size + alignment, dtype=np.uint8)
    offset = -raw.ctypes.data % alignment
    return raw[offset:offset + size].view(dtype).reshape(shape)


def address(array):
    """The data address of a NumPy array (0 for None)."""
    return 0 if array is None else array.ctypes.data


# --------------------------------------------------------------------------
# Structures


class StructureRegistry:
    """Live structures by ``id`` (weakly held: a structure freed leaves it)."""

    def __init__(self):
        self._objects = weakref.WeakValueDictionary()
        # reentrant: a structure's __del__ may run (garbage collection) while this thread
        # holds the lock
        self._lock = threading.RLock()

    def add(self, structure):
        with self._lock:
            self._objects[structure.id] = structure

    def get(self, structure_id):
        with self._lock:
            return self._objects.get(structure_id)

    def discard_id(self, structure_id, structure):
        """Forget ``structure_id`` if it still designates ``structure``."""
        with self._lock:
            if self._objects.get(structure_id) is structure:
                del self._objects[structure_id]


class CpuCapture:
    """How a CPU build learns that the calling thread records a CPU graph
    (``sim.capture("cpu")``), which then records the build instead of running it:
    numba_sim.launch_capture, a layer above, installs its ``cpu_graph_recording`` here."""

    def __init__(self):
        self.graph = lambda: None  # the graph this thread records into, or None


cpu_capture = CpuCapture()

#: The live CPU structures of every kind (HashGrid, Bvh, Mesh), by ``id``.
cpu_structures = StructureRegistry()

#: The live structures of every kind on every device, by ``id``: what a launch checks a
#: ``uint64`` id against before a query reads it (numba_sim/structure_ids.py).
live_structures = StructureRegistry()


class SpatialStructure:
    """What every spatial structure shares: ``id`` and how compiled code receives it.

    Subclasses keep their descriptor and buffers in ``self._storage`` (whose
    ``id`` is the descriptor's address), the device in ``self.device`` and a
    lock in ``self._lock``, and call :meth:`_register` once built. Class
    attributes: ``argument`` names the structure in the builtins' messages,
    ``cpu_hint`` says how to make one for CPU code.
    """

    #: The Numba type of the objects (Numba's protocol), set by numba_sim's typing
    #: (``register_spatial_type`` in numba_sim/typing/spatial_common.py), which this layer
    #: does not import.
    _numba_type_ = None
    argument = "structure"
    cpu_hint = "build it from NumPy arrays"

    @property
    def id(self):
        """Address of the structure's descriptor on its device (Warp's ``id``)."""
        return self._storage.id

    @property
    def _cpu_id(self):
        """``id`` for CPU code (Numba's unboxing); refuses a CUDA structure."""
        if self.device != "cpu":
            raise ValueError(f"a {type(self).__name__} on {self.device} was passed to CPU code; "
                             f"{self.cpu_hint}, or call a CUDA kernel")
        return self._storage.id

    def _register(self):
        """Make the structure known as live by its ``id`` (launches check ids against it) and
        a CPU structure findable from its ``id`` (Python-mode builtins take either)."""
        live_structures.add(self)
        if self.device == "cpu":
            cpu_structures.add(self)

    def __del__(self):
        """Release the structure (Warp's ``__del__``): its ``id`` stops being a live
        structure (a launch given it raises) and its buffers are dropped. Safe on an
        instance whose ``__init__`` never ran or failed, and when called twice."""
        storage = self.__dict__.pop("_storage", None)
        if storage is None:
            return
        for registry in (live_structures, cpu_structures):
            registry.discard_id(storage.id, self)


class RefittableStructure(SpatialStructure):
    """A structure over caller's arrays that it keeps (Bvh, Mesh): adds ``refit``.

    ``self._storage`` also checks the inputs (``check_inputs``) and refits.
    """

    def refit(self):
        """Update the structure after its inputs moved in place (a Bvh's ``lowers`` and
        ``uppers``, a Mesh's ``points``); the topology stays.

        A CPU refit checks the inputs first (finite, ...) and leaves the
        structure untouched when they are bad; a CUDA refit does not check (it
        would have to wait for the GPU), as in Warp.
        """
        with self._lock:
            if self.device == "cpu":
                self._storage.check_inputs(f"{type(self).__name__}.refit")
            self._storage.refit()


def cpu_structure(value, cls, function):
    """The live CPU ``cls`` that ``value`` (the object or its ``id``) designates.

    For builtins run as Python (``function`` names the builtin in messages).
    """
    name, argument = cls.__name__, cls.argument
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        found = cpu_structures.get(int(value))
        if not isinstance(found, cls):
            raise ValueError(
                f"{function}(): {argument}={int(value):#x} is not the id of a live CPU {name} "
                f"(called from Python, {function} takes CPU structures; query CUDA ones in CUDA "
                "kernels)"
            )
        return found
    if not isinstance(value, cls):
        raise TypeError(f"{function}(): {argument} must be a sim.{name} or its id (an int), "
                        f"not {type(value).__name__}")
    if value.device != "cpu":
        raise ValueError(f"{function}(): the {name} is on {value.device}; called from Python "
                         f"{function} takes CPU structures (query CUDA ones in CUDA kernels)")
    return value


def vec3_argument(value, function, what):
    """``value`` as 3 float32 (for builtins run as Python)."""
    try:
        vector = np.array(value, dtype=np.float32).reshape(3)
    except (TypeError, ValueError):
        raise TypeError(f"{function}(): {what} must be a vec3 (3 numbers), "
                        f"not {type(value).__name__}") from None
    return np.ascontiguousarray(vector)


# --------------------------------------------------------------------------
# Devices


def cuda_device_name(what, ordinal=None):
    """``"cuda:N"`` for CUDA device ``ordinal`` (None: the current device).

    Errors start with ``what`` (the call and argument): a RuntimeError without
    a GPU, a ValueError for an ordinal with no device.
    """
    from numba import cuda  # numba-cuda takes half a second to import: only CUDA pays it

    if not cuda.is_available():
        raise RuntimeError(f"{what} no CUDA GPU is available")
    if ordinal is None:
        return f"cuda:{cuda.get_current_device().id}"
    if ordinal >= len(cuda.gpus):
        raise ValueError(f"{what} no such CUDA device")
    return f"cuda:{ordinal}"


def device_index(device):
    """N of ``"cuda:N"``."""
    return int(device.split(":")[1])


def array_device(where, name, array):
    """``"cpu"`` for a NumPy array, ``"cuda:N"`` (the current device) for a CUDA array.

    Anything else, and a CUDA array without ``__cuda_array_interface__`` (the
    structures that keep their arrays read them through it), is a TypeError
    naming ``where`` and ``name``.
    """
    kind = arrays.device_of(array)
    if kind == "cpu":
        return "cpu"
    if kind is None or not hasattr(array, "__cuda_array_interface__"):
        raise TypeError(f"{where}({name}=...): expected a NumPy array (CPU) or a CUDA array "
                        f"(CuPy, or anything with __cuda_array_interface__), "
                        f"not {type(array).__name__}")
    return cuda_device_name(f"{where}({name}=...): a CUDA array was given but")


# --------------------------------------------------------------------------
# Argument checks


def _shape_and_dtype(array):
    if isinstance(array, np.ndarray):
        return array.shape, array.dtype
    interface = array.__cuda_array_interface__
    return tuple(interface["shape"]), np.dtype(interface["typestr"])


def check_vec3_rows(where, name, dtype, shape, limit, unit="rows"):
    """TypeError / ValueError naming ``where`` and ``name`` unless (dtype, shape) is that of an
    (n, 3) float32 array with n <= ``limit``."""
    if dtype != np.float32:
        raise TypeError(f"{where}({name}=...): {name} must be float32 (an (n, 3) array of vec3), "
                        f"not {dtype}")
    if len(shape) != 2 or shape[1] != 3:
        raise ValueError(f"{where}({name}=...): {name} must have shape (n, 3), not {tuple(shape)}")
    if shape[0] > limit:
        raise ValueError(f"{where}({name}=...): more than {limit} {unit}")


def vec3_array(where, name, array, device=None):
    """Check that ``array`` is a C-contiguous (n, 3) float32 array (on ``device``).

    Returns (n, its device). The arrays are used in place (a later refit reads
    them again), so they are never copied: anything else is an error naming
    ``where`` and ``name``.
    """
    found = array_device(where, name, array)
    if device is not None and found != device:
        raise ValueError(f"{where}({name}=...): expected an array on {device} (where the other "
                         f"arrays are), not on {found}")
    shape, dtype = _shape_and_dtype(array)
    check_vec3_rows(where, name, dtype, shape, MAX_ITEMS)
    if not arrays.c_contiguous(array):
        raise ValueError(f"{where}({name}=...): {name} must be C-contiguous (it is used in place: "
                         "refit reads it again); pass np.ascontiguousarray(...)")
    return int(shape[0]), found


def check_finite_rows(where, name, values):
    """ValueError naming the first row of the (n, 3) NumPy array ``values`` with NaN or inf."""
    if np.isfinite(values).all():  # one flat reduction: a row-wise one costs 10x more
        return
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"{where}({name}=...): {name}[{row}] = {values[row].tolist()} is not "
                         "finite (NaN or infinite bounds are not allowed)")


def int_argument(where, name, value):
    """``value`` as an int (``operator.index``); a TypeError naming the argument."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{where}({name}=...) must be an int, not {type(value).__name__}") from None


def positive_int(where, name, value):
    """``value`` as an int >= 1; TypeError / ValueError naming the argument."""
    value = int_argument(where, name, value)
    if value < 1:
        raise ValueError(f"{where}({name}={value}) must be at least 1")
    return value


def group_ids(where, groups, count, device):
    """``groups`` (one integer per item, on ``device``) as a host int32 copy, checked.

    Errors name ``where`` and ``groups``; a CUDA array is copied to the host.
    """
    groups_device = array_device(where, "groups", groups)
    if groups_device != device:
        raise ValueError(f"{where}(groups=...): expected an array on {device} (where the "
                         f"boxes are), not on {groups_device}")
    shape, dtype = _shape_and_dtype(groups)
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f"{where}(groups=...): groups must be integers (int32), not {dtype}")
    if shape != (count,):
        raise ValueError(f"{where}(groups=...): expected shape ({count},), one group per item, "
                         f"not {shape}")
    host = groups if isinstance(groups, np.ndarray) else arrays.to_numpy(groups)
    host = np.asarray(host)
    info = np.iinfo(np.int32)
    if host.size and (host.min() < info.min or host.max() > info.max):
        raise ValueError(f"{where}(groups=...): group ids must fit in int32")
    return np.ascontiguousarray(host, dtype=np.int32).copy()


def triangle_indices(where, indices, num_points):
    """``indices`` (NumPy) as a flat C-contiguous int32 copy, checked; errors name ``indices``."""
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"{where}(indices=...): indices must be integers (int32), "
                        f"not {indices.dtype}")
    if not (indices.ndim == 2 and indices.shape[1] == 3) and not (
            indices.ndim == 1 and indices.size % 3 == 0):
        raise ValueError(f"{where}(indices=...): indices must have shape (m, 3) or (3 m,), "
                         f"not {indices.shape}")
    flat = indices.reshape(-1)
    if flat.size // 3 > MAX_ITEMS:
        raise ValueError(f"{where}(indices=...): more than {MAX_ITEMS} triangles")
    bad = (flat < 0) | (flat >= num_points)
    if bad.any():
        position = int(np.argmax(bad))
        raise ValueError(f"{where}(indices=...): index {int(flat[position])} of triangle "
                         f"{position // 3} is out of range for {num_points} points")
    return np.ascontiguousarray(flat, dtype=np.int32).copy()
