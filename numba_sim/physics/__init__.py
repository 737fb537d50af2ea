"""numba_sim.physics: the simulation layer (API-physics.md), written in numba_sim's
kernel language: ``ModelBuilder`` describes particles, springs, cloth, soft bodies,
rigid bodies with shapes and joints; ``finalize`` makes a ``Model``; solvers step
``State``s."""

from numba_sim.physics.articulation import eval_jacobian, eval_mass_matrix
from numba_sim.physics.builder import (
    PARTICLE_FLAG_ACTIVE, GeoType, JointType, ModelBuilder, ShapeConfig,
)
from numba_sim.physics.mesh import Mesh
from numba_sim.physics.import_common import Actuator, FormatError, Imported
from numba_sim.physics.model import Contacts, Control, Model, State
from numba_sim.physics.solver_featherstone import SolverFeatherstone, eval_fk, eval_ik
from numba_sim.physics.solver_semi_implicit import SolverSemiImplicit
from numba_sim.physics.solver_xpbd import SolverXPBD
from numba_sim.physics import viewer  # noqa: E402  (physics.viewer.ViewerUSD, ...)

__all__ = ["Actuator", "Contacts", "Control", "FormatError", "GeoType", "Imported",
           "JointType", "Mesh", "Model", "ModelBuilder", "PARTICLE_FLAG_ACTIVE", "ShapeConfig",
           "SolverFeatherstone", "SolverSemiImplicit", "SolverXPBD", "State", "eval_fk",
           "eval_ik", "viewer"]
