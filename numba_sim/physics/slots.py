"""The element-force slots of the semi-implicit solver's one-thread-per-element path.

Every element vertex has a slot of its own: vertex ``v`` of element ``e`` of a kind
writes its force to ``slots[dest[base[kind] + e * vertices + v]]`` (springs 2 vertices,
triangles 3, bending edges 4, tetrahedra 4, in that order).  ``dest`` lays the slots
out particle by particle, so each particle then sums one contiguous run,
``slots[start[i]:start[i + 1]]`` (``kernels.integrate_kernel``): scattered writes,
contiguous reads.  No atomics, and the sum's order is fixed, so the forces do not
depend on the thread count.
"""

import numpy as np

import numba_sim as sim


class ElementSlots:
    """Slot bases per element kind (``spring``, ``tri``, ``edge``, ``tet``), each element
    vertex's slot (``dest``) and each particle's first slot (``start``) of *model*, on
    the model's device."""

    def __init__(self, model):
        xp = model._xp
        groups = {"spring": model.spring_indices, "tri": model.tri_indices,
                  "edge": model.edge_indices, "tet": model.tet_indices}
        owners, base = [], 0
        self.base = {}
        for name, indices in groups.items():
            owner = sim.to_numpy(indices).reshape(-1).astype(np.int64)
            self.base[name] = base
            owners.append(owner)
            base += owner.size
        owner = np.concatenate(owners)
        if (owner < 0).any():
            raise ValueError(f"ElementSlots: element indices must be >= 0, got {owner.min()}")
        order = np.argsort(owner, kind="stable")
        dest = np.empty(base, dtype=np.int32)
        dest[order] = np.arange(base, dtype=np.int32)
        start = np.zeros(model.particle_count + 1, dtype=np.int32)
        np.cumsum(np.bincount(owner, minlength=model.particle_count), out=start[1:])
        self.count = base
        self.dest = xp.asarray(dest)
        self.start = xp.asarray(start)
        self.slots = xp.zeros((max(base, 1), 3), dtype=np.float32)
