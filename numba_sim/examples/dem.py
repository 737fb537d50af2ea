"""DEM granular simulation: Warp's example_dem ported by swapping ``wp`` for ``sim``.

65,536 particles (32 x 64 x 32) dropped onto the ground with a sideways
velocity, 64 substeps per frame; contacts found with a HashGrid.  The kernels
below are Warp's, line for line.

    numba-sim run dem [--device cpu|cuda] [--frames N] [--out dem.png]
"""

import numpy as np

import numba_sim as sim


@sim.func
def contact_force(n: sim.vec3, v: sim.vec3, c: float, k_n: float, k_d: float, k_f: float, k_mu: float):
    vn = sim.dot(n, v)
    jn = c * k_n
    jd = min(vn, 0.0) * k_d

    # contact force
    fn = jn + jd

    # friction force
    vt = v - n * vn
    vs = sim.length(vt)

    if vs > 0.0:
        vt = vt / vs

    # Coulomb condition
    ft = sim.min(vs * k_f, k_mu * sim.abs(fn))

    # total force
    return -n * fn - vt * ft


@sim.kernel
def apply_forces(
    grid: sim.uint64,
    particle_x: sim.array[sim.vec3],
    particle_v: sim.array[sim.vec3],
    particle_f: sim.array[sim.vec3],
    radius: float,
    k_contact: float,
    k_damp: float,
    k_friction: float,
    k_mu: float,
):
    tid = sim.tid()

    # order threads by cell
    i = sim.hash_grid_point_id(grid, tid)

    x = particle_x[i]
    v = particle_v[i]

    f = sim.vec3()

    # ground contact
    n = sim.vec3(0.0, 1.0, 0.0)
    c = sim.dot(n, x)

    cohesion_ground = 0.02
    cohesion_particle = 0.0075

    if c < cohesion_ground:
        f = f + contact_force(n, v, c, k_contact, k_damp, 100.0, 0.5)

    # particle contact
    neighbors = sim.hash_grid_query(grid, x, radius * 5.0)

    for index in neighbors:
        if index != i:
            # compute distance to point
            n = x - particle_x[index]
            d = sim.length(n)
            err = d - radius * 2.0

            if err <= cohesion_particle:
                n = n / d
                vrel = v - particle_v[index]

                f = f + contact_force(n, vrel, err, k_contact, k_damp, k_friction, k_mu)

    particle_f[i] = f


@sim.kernel
def integrate(
    x: sim.array[sim.vec3],
    v: sim.array[sim.vec3],
    f: sim.array[sim.vec3],
    gravity: sim.vec3,
    dt: float,
    inv_mass: float,
):
    tid = sim.tid()

    v_new = v[tid] + f[tid] * inv_mass * dt + gravity * dt
    x_new = x[tid] + v_new * dt

    v[tid] = v_new
    x[tid] = x_new


def particle_grid(dim_x, dim_y, dim_z, lower, radius, jitter, seed=42):
    """Warp's example_dem initial state: a jittered block of particles."""
    rng = np.random.default_rng(seed)
    points = np.meshgrid(np.linspace(0, dim_x, dim_x), np.linspace(0, dim_y, dim_y),
                         np.linspace(0, dim_z, dim_z))
    points_t = np.array((points[0], points[1], points[2])).T * radius * 2.0 + np.array(lower)
    points_t = points_t + rng.random(size=points_t.shape) * radius * jitter
    return points_t.reshape((-1, 3))


class Example:
    """The DEM simulation; ``step()`` advances one frame (``sim_substeps`` substeps)."""

    title = "DEM granular flow (Warp's example_dem)"

    def __init__(self, device="cpu", dims=(32, 64, 32), sim_substeps=64):
        fps = 60
        self.frame_dt = 1.0 / fps
        self.sim_substeps = sim_substeps
        self.sim_dt = self.frame_dt / self.sim_substeps
        self.sim_time = 0.0
        self.device = device

        self.point_radius = 0.1
        self.k_contact = 8000.0
        self.k_damp = 2.0
        self.k_friction = 1.0
        self.k_mu = 100000.0  # for cohesive materials
        self.inv_mass = 64.0

        self.grid = sim.HashGrid(128, 128, 128, device=device)
        self.grid_cell_size = self.point_radius * 5.0

        points = particle_grid(*dims, (0.0, 0.5, 0.0), self.point_radius, 0.1)
        self.x = sim.from_numpy(points, dtype=sim.vec3, device=device)
        velocities = np.ones([len(points), 3]) * np.array([0.0, 0.0, 15.0])
        self.v = sim.from_numpy(velocities, dtype=sim.vec3, device=device)
        self.f = sim.zeros_like(self.v)
        self.gravity = sim.vec3(0.0, -9.8, 0.0)

    @property
    def particle_count(self):
        return self.x.shape[0]

    def simulate(self):
        n = self.particle_count
        for _ in range(self.sim_substeps):
            sim.launch(apply_forces, dim=n,
                       inputs=[self.grid.id, self.x, self.v, self.f, self.point_radius,
                               self.k_contact, self.k_damp, self.k_friction, self.k_mu])
            sim.launch(integrate, dim=n,
                       inputs=[self.x, self.v, self.f, self.gravity, self.sim_dt, self.inv_mass])

    def step(self):
        self.grid.build(self.x, self.grid_cell_size)
        self.simulate()
        self.sim_time += self.frame_dt

    def positions(self):
        """A copy of the particle positions (a recorded frame must not change with the next step)."""
        return np.array(sim.to_numpy(self.x))

    def radius(self):
        return self.point_radius
