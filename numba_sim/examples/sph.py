"""SPH fluid: Warp's example_sph ported by swapping ``wp`` for ``sim``.

A block of fluid in the corner of an 80^3 box collapses under gravity
(smoothed-particle hydrodynamics, neighbours from a HashGrid).  With Warp's
default smoothing length 0.8 that is 62,500 particles and 40 steps per frame.

    numba-sim run sph [--device cpu|cuda] [--frames N] [--out sph.gif]

The command line runs it at smoothing length 2.0 (4,000 particles, 16 steps a frame) for
120 frames, long enough to see the column collapse; ``Example()`` keeps Warp's 0.8.
"""

import numpy as np

import numba_sim as sim


@sim.func
def square(x: float):
    return x * x


@sim.func
def cube(x: float):
    return x * x * x


@sim.func
def density_kernel(xyz: sim.vec3, smoothing_length: float):
    # calculate distance
    distance = sim.dot(xyz, xyz)

    return sim.max(cube(square(smoothing_length) - distance), 0.0)


@sim.func
def diff_pressure_kernel(
    xyz: sim.vec3, pressure: float, neighbor_pressure: float, neighbor_rho: float, smoothing_length: float
):
    # calculate distance
    distance = sim.sqrt(sim.dot(xyz, xyz))

    if distance < smoothing_length:
        # calculate terms of kernel
        term_1 = -xyz / distance
        term_2 = (neighbor_pressure + pressure) / (2.0 * neighbor_rho)
        term_3 = square(smoothing_length - distance)
        return term_1 * term_2 * term_3
    else:
        return sim.vec3()


@sim.func
def diff_viscous_kernel(xyz: sim.vec3, v: sim.vec3, neighbor_v: sim.vec3, neighbor_rho: float, smoothing_length: float):
    # calculate distance
    distance = sim.sqrt(sim.dot(xyz, xyz))

    # calculate terms of kernel
    if distance < smoothing_length:
        term_1 = (neighbor_v - v) / neighbor_rho
        term_2 = smoothing_length - distance
        return term_1 * term_2
    else:
        return sim.vec3()


@sim.kernel
def compute_density(
    grid: sim.uint64,
    particle_x: sim.array[sim.vec3],
    particle_rho: sim.array[float],
    density_normalization: float,
    smoothing_length: float,
):
    tid = sim.tid()

    # order threads by cell
    i = sim.hash_grid_point_id(grid, tid)

    # get local particle variables
    x = particle_x[i]

    # store density
    rho = float(0.0)

    # particle contact
    neighbors = sim.hash_grid_query(grid, x, smoothing_length)

    # loop through neighbors to compute density
    for index in neighbors:
        # compute distance
        distance = x - particle_x[index]

        # compute kernel derivative
        rho += density_kernel(distance, smoothing_length)

    # add external potential
    particle_rho[i] = density_normalization * rho


@sim.kernel
def get_acceleration(
    grid: sim.uint64,
    particle_x: sim.array[sim.vec3],
    particle_v: sim.array[sim.vec3],
    particle_rho: sim.array[float],
    particle_a: sim.array[sim.vec3],
    isotropic_exp: float,
    base_density: float,
    gravity: float,
    pressure_normalization: float,
    viscous_normalization: float,
    smoothing_length: float,
):
    tid = sim.tid()

    # order threads by cell
    i = sim.hash_grid_point_id(grid, tid)

    # get local particle variables
    x = particle_x[i]
    v = particle_v[i]
    rho = particle_rho[i]
    pressure = isotropic_exp * (rho - base_density)

    # store forces
    pressure_force = sim.vec3()
    viscous_force = sim.vec3()

    # particle contact
    neighbors = sim.hash_grid_query(grid, x, smoothing_length)

    # loop through neighbors to compute acceleration
    for index in neighbors:
        if index != i:
            # get neighbor velocity
            neighbor_v = particle_v[index]

            # get neighbor density and pressures
            neighbor_rho = particle_rho[index]
            neighbor_pressure = isotropic_exp * (neighbor_rho - base_density)

            # compute relative position
            relative_position = particle_x[index] - x

            # calculate pressure force
            pressure_force += diff_pressure_kernel(
                relative_position, pressure, neighbor_pressure, neighbor_rho, smoothing_length
            )

            # compute kernel derivative
            viscous_force += diff_viscous_kernel(relative_position, v, neighbor_v, neighbor_rho, smoothing_length)

    # sum all forces
    force = pressure_normalization * pressure_force + viscous_normalization * viscous_force

    # add external potential
    particle_a[i] = force / rho + sim.vec3(0.0, gravity, 0.0)


@sim.kernel
def apply_bounds(
    particle_x: sim.array[sim.vec3],
    particle_v: sim.array[sim.vec3],
    damping_coef: float,
    width: float,
    height: float,
    length: float,
):
    tid = sim.tid()

    # get pos and velocity
    x = particle_x[tid]
    v = particle_v[tid]

    # clamp x left
    if x[0] < 0.0:
        x = sim.vec3(0.0, x[1], x[2])
        v = sim.vec3(v[0] * damping_coef, v[1], v[2])

    # clamp x right
    if x[0] > width:
        x = sim.vec3(width, x[1], x[2])
        v = sim.vec3(v[0] * damping_coef, v[1], v[2])

    # clamp y bot
    if x[1] < 0.0:
        x = sim.vec3(x[0], 0.0, x[2])
        v = sim.vec3(v[0], v[1] * damping_coef, v[2])

    # clamp z left
    if x[2] < 0.0:
        x = sim.vec3(x[0], x[1], 0.0)
        v = sim.vec3(v[0], v[1], v[2] * damping_coef)

    # clamp z right
    if x[2] > length:
        x = sim.vec3(x[0], x[1], length)
        v = sim.vec3(v[0], v[1], v[2] * damping_coef)

    # apply clamps
    particle_x[tid] = x
    particle_v[tid] = v


@sim.kernel
def kick(particle_v: sim.array[sim.vec3], particle_a: sim.array[sim.vec3], dt: float):
    tid = sim.tid()
    v = particle_v[tid]
    particle_v[tid] = v + particle_a[tid] * dt


@sim.kernel
def drift(particle_x: sim.array[sim.vec3], particle_v: sim.array[sim.vec3], dt: float):
    tid = sim.tid()
    x = particle_x[tid]
    particle_x[tid] = x + particle_v[tid] * dt


@sim.kernel
def initialize_particles(
    particle_x: sim.array[sim.vec3], smoothing_length: float, width: float, height: float, length: float
):
    tid = sim.tid()

    # grid size
    nr_x = int(width / 4.0 / smoothing_length)
    nr_y = int(height / smoothing_length)
    nr_z = int(length / 4.0 / smoothing_length)

    # calculate particle position
    z = float(tid % nr_z)
    y = float((tid // nr_z) % nr_y)
    x = float((tid // (nr_z * nr_y)) % nr_x)
    pos = smoothing_length * sim.vec3(x, y, z)

    # add small jitter
    state = sim.rand_init(123, tid)
    pos = pos + 0.001 * smoothing_length * sim.vec3(sim.randn(state), sim.randn(state), sim.randn(state))

    # set position
    particle_x[tid] = pos


class Example:
    """The SPH simulation; ``step()`` advances one frame (``sim_step_to_frame_ratio`` steps)."""

    title = "SPH fluid (Warp's example_sph)"

    def __init__(self, device="cpu", smoothing_length=0.8):
        fps = 60
        self.frame_dt = 1.0 / fps
        self.sim_time = 0.0
        self.device = device

        # simulation params (Warp's)
        self.smoothing_length = smoothing_length
        self.width = 80.0  # x
        self.height = 80.0  # y
        self.length = 80.0  # z
        self.isotropic_exp = 20
        self.base_density = 1.0
        self.particle_mass = 0.01 * self.smoothing_length**3
        self.dt = 0.01 * self.smoothing_length
        self.dynamic_visc = 0.025
        self.damping_coef = -0.95
        self.gravity = -0.1
        self.n = int(self.height * (self.width / 4.0) * (self.height / 4.0) / (self.smoothing_length**3))
        self.sim_step_to_frame_ratio = int(32 / self.smoothing_length)

        self.density_normalization = (315.0 * self.particle_mass) / (64.0 * np.pi * self.smoothing_length**9)
        self.pressure_normalization = -(45.0 * self.particle_mass) / (np.pi * self.smoothing_length**6)
        self.viscous_normalization = (45.0 * self.dynamic_visc * self.particle_mass) / (
            np.pi * self.smoothing_length**6
        )

        self.x = sim.empty(self.n, dtype=sim.vec3, device=device)
        self.v = sim.zeros(self.n, dtype=sim.vec3, device=device)
        self.rho = sim.zeros(self.n, dtype=float, device=device)
        self.a = sim.zeros(self.n, dtype=sim.vec3, device=device)

        sim.launch(initialize_particles, dim=self.n,
                   inputs=[self.x, self.smoothing_length, self.width, self.height, self.length])

        grid_size = int(self.height / (4.0 * self.smoothing_length))
        self.grid = sim.HashGrid(grid_size, grid_size, grid_size, device=device)

    def step(self):
        for _ in range(self.sim_step_to_frame_ratio):
            self.grid.build(self.x, self.smoothing_length)
            sim.launch(compute_density, dim=self.n,
                       inputs=[self.grid.id, self.x, self.rho, self.density_normalization,
                               self.smoothing_length])
            sim.launch(get_acceleration, dim=self.n,
                       inputs=[self.grid.id, self.x, self.v, self.rho, self.a, self.isotropic_exp,
                               self.base_density, self.gravity, self.pressure_normalization,
                               self.viscous_normalization, self.smoothing_length])
            sim.launch(apply_bounds, dim=self.n,
                       inputs=[self.x, self.v, self.damping_coef, self.width, self.height, self.length])
            sim.launch(kick, dim=self.n, inputs=[self.v, self.a, self.dt])
            sim.launch(drift, dim=self.n, inputs=[self.x, self.v, self.dt])
        self.sim_time += self.frame_dt

    def positions(self):
        """A copy of the particle positions (a recorded frame must not change with the next step)."""
        return np.array(sim.to_numpy(self.x))

    def radius(self):
        return self.smoothing_length
