"""numba_sim.physics against warp.sim 1.9.1 on the CPU: the same scenes, one run.

    python benchmarks/physics.py [--quick] [--warp-sim-python PATH] [--json FILE]

warp.sim exists only up to warp-lang 1.9.1, so its side runs in a venv of its own,
in a subprocess: ``--warp-sim-python`` (or ``$WARP_SIM_PYTHON``; default
``/work/venvs/warp191/bin/python``), made with::

    python3 -m venv /work/venvs/warp191
    /work/venvs/warp191/bin/pip install warp-lang==1.9.1 numpy

Three contenders, each a long-lived process that builds every scene once, warms it
up (compiles) and then times frames on request: warp.sim (its CPU backend runs a
launch on one thread; ``wp.config.mode = "release"``, plain launches: graph capture
is CUDA-only), numba_sim on one thread (a subprocess with ``NUMBA_NUM_THREADS=1``)
and numba_sim on every core (this process).  Rounds alternate the order of the
contenders; every round restarts each scene from its initial state, so all time
the same frames.  A frame is ``substeps`` steps of ``1/60/substeps`` s (warp.sim:
``state_0.clear_forces(); integrator.simulate(...)``, swapping states, as its
examples; numba_sim: ``solver.step_frame``, which replays a captured CPU graph for
small models).  Reported: median wall time per frame, ratios warp.sim / numba_sim
per core and on all cores, and the load average before and after.

Rigid scenes (``n`` counts bodies instead of particles): box rods hinged end to end
(a pendulum, a 3-link chain; also 64 and 4096 pendulums as worlds of one model) in
Featherstone's reduced coordinates and in XPBD, and three boxes dropped onto the
ground (XPBD, contacts from one collide a frame: ``wp.sim.collide`` /
``model.collide``); joints without armature on both sides (warp.sim's default is
0.01).  Featherstone scenes must agree body by body as the semi-implicit ones do
(``SEMI_IMPLICIT_TOLERANCE``); rigid XPBD scenes by centroid (warp.sim's XPBD joints
swing 9% slow).

Same physics on both sides: springs, cloth triangles and bending, tetrahedra, no
contacts (warp.sim's semi-implicit integrator never builds its particle grid, so
its particle-particle launch does nothing: it is skipped with
``particle_max_radius = 0``, and ``model.ground = False``; numba_sim's builders set
``particle_collision = False``).  Checked before timing: after ``CHECK_FRAMES``
frames every position is finite on both sides, and the largest distance between
corresponding particles is printed; semi-implicit scenes must agree to
``SEMI_IMPLICIT_TOLERANCE`` (the same formulas in float32), XPBD scenes (Gauss-Seidel
against warp.sim's Jacobi, different tetrahedron constraints) only to within
``XPBD_TOLERANCE`` of the scene's size in the position of their centroid.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

FPS = 60.0
CHECK_FRAMES = 5
SEMI_IMPLICIT_TOLERANCE = 1e-3
"""m: largest distance between corresponding particles after CHECK_FRAMES frames"""
XPBD_TOLERANCE = 0.1
"""fraction of the scene's extent: distance between the two centroids"""

SCENES = {
    # name: geometry, integrator, substeps, frames timed per round, target ratio
    "rope": ("rope", "semi_implicit", 20, 30, 20.0),
    "rope_xpbd": ("rope", "xpbd", 20, 30, 20.0),
    "cloth_21": ("cloth_21", "semi_implicit", 64, 8, 5.0),
    "cloth_21_xpbd": ("cloth_21", "xpbd", 64, 8, 5.0),
    "cloth_128": ("cloth_128", "semi_implicit", 32, 2, 1.5),
    "soft_cube": ("soft_cube", "semi_implicit", 32, 20, 5.0),
    "soft_cube_xpbd": ("soft_cube", "xpbd", 32, 20, 5.0),
    # rigid bodies (issue 19): hinged box rods released from the horizontal, boxes dropped
    "pendulum": ("pendulum", "featherstone", 10, 30, 5.0),
    "pendulum_xpbd": ("pendulum", "xpbd", 10, 30, 5.0),
    "chain_3": ("chain_3", "featherstone", 10, 30, 5.0),
    "chain_3_xpbd": ("chain_3", "xpbd", 10, 30, 5.0),
    "pendulum_64_worlds": ("pendulum_64", "featherstone", 10, 10, 5.0),
    "pendulum_4096_worlds": ("pendulum_4096", "featherstone", 10, 2, 5.0),
    "boxes_on_ground": ("boxes", "xpbd", 10, 30, 5.0),
}
RIGID_GEOMETRIES = {"pendulum", "chain_3", "pendulum_64", "pendulum_4096", "boxes"}
CONTACT_GEOMETRIES = {"boxes"}
ROUNDS, QUICK_ROUNDS = 5, 1


# ----------------------------------------------------------------------------- scenes
# Written once against the methods both builders share; `side` supplies the vector types.

def rope(b, side, xpbd):
    """20 particles 0.1 m apart, the first pinned, springs ke = 1e4."""
    for i in range(20):
        b.add_particle(side.vec3(i * 0.1, 2.0, 0.0), side.vec3(0.0, 0.0, 0.0),
                       0.0 if i == 0 else 0.1, radius=0.01)
    for i in range(19):
        b.add_spring(i, i + 1, 1.0e4, 0.0, 0.0)


def cloth(dim):
    """warp.sim's cloth example's sheet (cell 0.1 m, 0.1 kg particles, left edge
    pinned, horizontal), ``dim + 1`` particles a side; XPBD with its springs."""
    def build(b, side, xpbd):
        material = dict(edge_ke=1.0e2, add_springs=True, spring_ke=1.0e3, spring_kd=0.0) \
            if xpbd else dict(tri_ke=1.0e3, tri_ka=1.0e3, tri_kd=1.0e1)
        b.add_cloth_grid(pos=side.vec3(0.0, 4.0, 0.0), rot=side.quat(0.70710678, 0.0, 0.0,
                                                                    0.70710678),
                         vel=side.vec3(0.0, 0.0, 0.0), dim_x=dim, dim_y=dim, cell_x=0.1,
                         cell_y=0.1, mass=0.1, fix_left=True, **material)
    return build


def soft_cube(b, side, xpbd):
    """5 x 5 x 5 particles (4^3 cells, 320 tetrahedra), hanging from its left face."""
    b.add_soft_grid(pos=side.vec3(0.0, 1.0, 0.0), rot=side.quat(0.0, 0.0, 0.0, 1.0),
                    vel=side.vec3(0.0, 0.0, 0.0), dim_x=4, dim_y=4, dim_z=4, cell_x=0.1,
                    cell_y=0.1, cell_z=0.1, density=100.0, k_mu=5.0e4, k_lambda=2.0e5,
                    k_damp=0.0, fix_left=True)


def chain(links, worlds=1):
    """*links* box rods 0.5 m long (0.05 m thick, density 1000) hinged about z end to end
    from a pivot at y = 2, held out along +x (y up); *worlds* copies 1 m apart in z."""
    def build(b, side, xpbd):
        template = side.builder() if worlds > 1 else b
        parent = -1
        for k in range(links):
            body = side.add_box_body(template, (0.25 * (2 * k + 1), 2.0, 0.0), (0.25, 0.025,
                                                                                0.025))
            side.add_revolute(template, parent, body,
                              (0.0, 2.0, 0.0) if parent < 0 else (0.25, 0.0, 0.0),
                              (-0.25, 0.0, 0.0), (0.0, 0.0, 1.0))
            parent = body
        if worlds > 1:
            side.replicate(b, template, worlds, (0.0, 0.0, 1.0))
    return build


def boxes(b, side, xpbd):
    """Three 0.2 m boxes dropped 0.05 m onto the ground, 0.5 m apart."""
    for k in range(3):
        side.add_box_body(b, (0.5 * k, 0.15, 0.0), (0.1, 0.1, 0.1))


GEOMETRY = {"rope": rope, "cloth_21": cloth(20), "cloth_128": cloth(127), "soft_cube": soft_cube,
            "pendulum": chain(1), "chain_3": chain(3), "pendulum_64": chain(1, 64),
            "pendulum_4096": chain(1, 4096), "boxes": boxes}


class Scene:
    """One scene on one side: its model, solver and two states."""

    def __init__(self, side, name):
        geometry, self.integrator, self.substeps, self.frames, _ = SCENES[name]
        self.side = side
        self.rigid = geometry in RIGID_GEOMETRIES
        self.collides = geometry in CONTACT_GEOMETRIES
        builder = side.builder()
        GEOMETRY[geometry](builder, side, self.integrator == "xpbd")
        self.model = side.finalize(builder, self.collides)
        self.solver = side.solver(self.model, self.integrator)
        self.states = [self.model.state(), self.model.state()]
        self.contacts = side.contacts(self.model) if self.collides else None
        self.dt = 1.0 / FPS / self.substeps

    def reset(self):
        for state in self.states:
            self.side.reset(self.model, state, self.integrator == "featherstone")

    def frame(self):
        self.states = self.side.frame(self)

    def positions(self):
        if self.rigid:
            return self.side.numpy(self.states[0].body_q)[:, :3]
        return self.side.numpy(self.states[0].particle_q)


class Ours:
    name = "numba_sim"

    def __init__(self):
        import numba
        from numba_sim import physics

        self.physics = physics
        self.threads = numba.get_num_threads()

    vec3 = staticmethod(lambda *v: tuple(v))
    quat = staticmethod(lambda *q: tuple(q))

    def builder(self):
        b = self.physics.ModelBuilder(up_axis="y", gravity=-9.81)
        b.particle_collision = False
        return b

    def finalize(self, builder, ground):
        if ground:
            builder.add_ground_plane()
        return builder.finalize("cpu")

    def add_box_body(self, b, pos, half):
        body = b.add_body(xform=(pos, None))
        b.add_shape_box(body, hx=half[0], hy=half[1], hz=half[2])
        return body

    def add_revolute(self, b, parent, child, parent_pos, child_pos, axis):
        b.add_joint_revolute(parent, child, parent_xform=(parent_pos, None),
                             child_xform=(child_pos, None), axis=axis)

    def replicate(self, b, template, count, spacing):
        b.replicate(template, count, spacing=spacing)

    def solver(self, model, integrator):
        if integrator == "xpbd":
            return self.physics.SolverXPBD(model, iterations=2)
        if integrator == "featherstone":
            return self.physics.SolverFeatherstone(model, angular_damping=0.0)
        return self.physics.SolverSemiImplicit(model)

    def contacts(self, model):
        return model.contacts()

    def reset(self, model, state, featherstone):
        for name in ("particle_q", "particle_qd", "body_q", "body_qd", "joint_q", "joint_qd"):
            getattr(state, name)[...] = getattr(model, name)
        if featherstone:
            self.physics.eval_fk(model, state.joint_q, state.joint_qd, state)

    def frame(self, scene):
        s0, s1 = scene.states
        if scene.collides:
            scene.model.collide(s0, scene.contacts)
        last = scene.solver.step_frame(s0, s1, None, scene.contacts, scene.dt, scene.substeps)
        return [s0, s1] if last is s0 else [s1, s0]

    numpy = staticmethod(np.asarray)


class WarpSim:
    name = "warp.sim"

    def __init__(self):
        import warp as wp

        wp.config.mode = "release"
        wp.config.quiet = True
        wp.init()
        import warp.sim

        self.wp = wp
        self.threads = 1
        self.vec3, self.quat = wp.vec3, wp.quat

    def builder(self):
        return self.wp.sim.ModelBuilder(up_vector=(0.0, 1.0, 0.0), gravity=-9.81)

    def finalize(self, builder, ground):
        model = builder.finalize(device="cpu")
        model.ground = ground
        model.particle_max_radius = 0.0  # its particle grid is never built: skip the no-op
        return model

    def add_box_body(self, b, pos, half):
        body = b.add_body(origin=self.wp.transform(pos, self.wp.quat_identity()))
        b.add_shape_box(body, hx=half[0], hy=half[1], hz=half[2], density=1000.0)
        return body

    def add_revolute(self, b, parent, child, parent_pos, child_pos, axis):
        wp = self.wp
        b.add_joint_revolute(parent, child, parent_xform=wp.transform(parent_pos, wp.quat_identity()),
                             child_xform=wp.transform(child_pos, wp.quat_identity()), axis=axis,
                             armature=0.0)

    def replicate(self, b, template, count, spacing):
        wp = self.wp
        for k in range(count):
            offset = wp.vec3(*(k * s for s in spacing))
            b.add_builder(template, xform=wp.transform(offset, wp.quat_identity()))

    def solver(self, model, integrator):
        if integrator == "xpbd":
            return self.wp.sim.XPBDIntegrator(iterations=2)
        if integrator == "featherstone":
            return self.wp.sim.FeatherstoneIntegrator(model)
        return self.wp.sim.SemiImplicitIntegrator()

    def contacts(self, model):
        return None  # warp.sim keeps its rigid contacts in the model

    def reset(self, model, state, featherstone):
        for name in ("particle_q", "particle_qd", "body_q", "body_qd", "joint_q", "joint_qd"):
            target = getattr(state, name, None)
            if target is not None and getattr(model, name) is not None:
                target.assign(getattr(model, name))
        if featherstone:
            self.wp.sim.eval_fk(model, state.joint_q, state.joint_qd, None, state)

    def frame(self, scene):
        s0, s1 = scene.states
        if scene.collides:
            self.wp.sim.collide(scene.model, s0)
        for _ in range(scene.substeps):
            s0.clear_forces()
            scene.solver.simulate(scene.model, s0, s1, scene.dt)
            s0, s1 = s1, s0
        return [s0, s1]

    @staticmethod
    def numpy(array):
        return array.numpy()


class Contender:
    """A side's scenes in this process: ``request`` answers the worker protocol."""

    def __init__(self, side):
        self.side = side
        self.scenes = {}

    def request(self, command):
        kind, name = command["kind"], command.get("scene")
        if kind == "threads":
            return {"threads": self.side.threads}
        if kind == "setup":
            start = time.perf_counter()
            scene = self.scenes[name] = Scene(self.side, name)
            scene.reset()
            for _ in range(2):  # compile, capture, warm the caches
                scene.frame()
            return {"seconds": time.perf_counter() - start,
                    "particles": int(scene.model.particle_count or scene.model.body_count)}
        scene = self.scenes[name]
        scene.reset()
        if kind == "check":
            for _ in range(command["frames"]):
                scene.frame()
            return {"positions": scene.positions().tolist()}
        times = []
        for _ in range(command["frames"]):
            start = time.perf_counter()
            scene.frame()
            times.append(time.perf_counter() - start)
        return {"times": times}


class Worker:
    """A Contender in a subprocess (``--worker SIDE``), one JSON line per request."""

    def __init__(self, python, side, env=None):
        self.process = subprocess.Popen(
            [python, os.path.abspath(__file__), "--worker", side], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env=dict(os.environ, **(env or {})))

    def send(self, command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def receive(self):
        for line in self.process.stdout:
            if line.startswith("@@"):
                reply = json.loads(line[2:])
                if "error" in reply:
                    raise RuntimeError(f"worker failed: {reply['error']}")
                return reply
        raise RuntimeError(f"worker exited with {self.process.wait()}")

    def request(self, command):
        self.send(command)
        return self.receive()

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def serve(side_name):
    contender = Contender(WarpSim() if side_name == "warp" else Ours())
    for line in sys.stdin:
        try:
            reply = contender.request(json.loads(line))
        except Exception as error:  # reported to the parent, which stops
            reply = {"error": f"{type(error).__name__}: {error}"}
        print("@@" + json.dumps(reply), flush=True)


# ----------------------------------------------------------------------------- the run

def check(name, warp_positions, ours_positions):
    """(passed, text) for two position arrays of one scene."""
    a, b = np.asarray(warp_positions), np.asarray(ours_positions)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return False, "non-finite positions"
    largest = float(np.linalg.norm(a - b, axis=1).max())
    if SCENES[name][1] in ("semi_implicit", "featherstone"):
        return largest <= SEMI_IMPLICIT_TOLERANCE, f"max |dx| {largest:.1e} m"
    # the scene's size; at least its 0.5 m links (one pendulum's centroid is its body)
    extent = max(float((a.max(axis=0) - a.min(axis=0)).max()), 0.5)
    centroid = float(np.linalg.norm(a.mean(axis=0) - b.mean(axis=0)))
    return centroid <= XPBD_TOLERANCE * extent, \
        f"centroid {centroid:.1e} m of {extent:.2f} m (max |dx| {largest:.1e})"


def main(argv=None):
    parser = argparse.ArgumentParser(description="numba_sim.physics vs warp.sim 1.9.1 (CPU)")
    parser.add_argument("--quick", action="store_true", help="one short round (a smoke run)")
    parser.add_argument("--warp-sim-python", default=os.environ.get(
        "WARP_SIM_PYTHON", "/work/venvs/warp191/bin/python"),
        help="python of a venv with warp-lang 1.9.1 (default $WARP_SIM_PYTHON or "
             "/work/venvs/warp191/bin/python)")
    parser.add_argument("--scenes", default=",".join(SCENES),
                        help=f"comma-separated subset of {', '.join(SCENES)}")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--worker", choices=["warp", "ours"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        serve(args.worker)
        return 0
    scenes = [s.strip() for s in args.scenes.split(",") if s.strip()]
    unknown = [s for s in scenes if s not in SCENES]
    if unknown:
        parser.error(f"--scenes: unknown {', '.join(unknown)}; choose from {', '.join(SCENES)}")
    if not os.path.exists(args.warp_sim_python):
        parser.error(f"--warp-sim-python: {args.warp_sim_python} does not exist (see the "
                     "docstring for making the warp.sim 1.9.1 venv)")
    start, load_before = time.perf_counter(), os.getloadavg()
    rounds = QUICK_ROUNDS if args.quick else ROUNDS
    contenders = {
        "warp.sim": Worker(args.warp_sim_python, "warp"),
        "ours_1": Worker(sys.executable, "ours", {"NUMBA_NUM_THREADS": "1"}),
        "ours_all": Contender(Ours()),
    }
    workers = [c for c in contenders.values() if isinstance(c, Worker)]
    setup = {}
    for name in scenes:  # the subprocesses build and compile while this one does
        for worker in workers:
            worker.send({"kind": "setup", "scene": name})
        setup[name] = {"ours_all": contenders["ours_all"].request({"kind": "setup", "scene": name})}
        for key, worker in contenders.items():
            if isinstance(worker, Worker):
                setup[name][key] = worker.receive()
    threads = contenders["ours_all"].side.threads
    checks = {}
    for name in scenes:
        positions = {key: c.request({"kind": "check", "scene": name, "frames": CHECK_FRAMES})
                     ["positions"] for key, c in contenders.items()}
        checks[name] = [check(name, positions["warp.sim"], positions[key])
                        for key in ("ours_1", "ours_all")]
    times = {name: {key: [] for key in contenders} for name in scenes}
    order = list(contenders)
    for r in range(rounds):
        for name in scenes:
            frames = SCENES[name][3] if not args.quick else max(1, SCENES[name][3] // 4)
            for key in order[r % 3:] + order[:r % 3]:
                reply = contenders[key].request({"kind": "time", "scene": name, "frames": frames})
                times[name][key] += reply["times"]
    for worker in workers:
        worker.close()
    load_after = os.getloadavg()
    results = report(scenes, setup, checks, times, threads)
    print(f"load average (1, 5, 15 min): before {_load(load_before)}, after {_load(load_after)}; "
          f"{os.cpu_count()} CPUs; {rounds} round(s); {time.perf_counter() - start:.0f} s in all")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "load_before": load_before, "load_after": load_after,
                       "threads": threads, "rounds": rounds}, f, indent=1)
    failed = [r["scene"] for r in results if not r["check"]]
    if failed:
        print(f"CHECK FAILED: {', '.join(failed)}")
        return 1
    return 0


def _load(values):
    return ", ".join(f"{v:.2f}" for v in values)


def report(scenes, setup, checks, times, threads):
    header = (f"{'scene':<20} {'n':>9} {'substeps':>8} {'warp.sim':>10} "
              f"{'ours 1 thr':>10} {f'ours {threads} thr':>10} {'x per core':>10} "
              f"{'x all':>7} {'target':>6}  check (vs warp.sim after {CHECK_FRAMES} frames)")
    print(header)
    print("-" * len(header))
    results = []
    for name in scenes:
        _, integrator, substeps, _, target = SCENES[name]
        median = {key: float(np.median(values)) for key, values in times[name].items()}
        per_core = median["warp.sim"] / median["ours_1"]
        all_cores = median["warp.sim"] / median["ours_all"]
        passed = all(ok for ok, _ in checks[name])
        print(f"{name:<20} {setup[name]['warp.sim']['particles']:>9} {substeps:>8} "
              f"{median['warp.sim'] * 1e3:>8.2f}ms {median['ours_1'] * 1e3:>8.2f}ms "
              f"{median['ours_all'] * 1e3:>8.2f}ms {per_core:>9.1f}x {all_cores:>6.1f}x "
              f"{target:>5.1f}x  {'ok' if passed else 'FAILED'}: {checks[name][0][1]}")
        results.append({"scene": name, "integrator": integrator, "substeps": substeps,
                        "median_s": median, "per_core": per_core, "all_cores": all_cores,
                        "target": target, "check": passed,
                        "check_text": [text for _, text in checks[name]],
                        "setup_s": {k: v["seconds"] for k, v in setup[name].items()}})
    return results


if __name__ == "__main__":
    sys.exit(main())
