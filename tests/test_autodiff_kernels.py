"""Adjoint kernels generated from the kernel-language AST, against central finite
differences in float64 (and Warp's Tape on the CPU, where Warp is right).

Each kernel maps inputs ``x`` to outputs ``y``; the loss is ``sum(w * y)`` with fixed random
weights ``w``, its gradient ``d loss / d x`` comes from ``tape.backward(grads=[(y, w)])``
and is compared with ``(loss(x + h e_k) - loss(x - h e_k)) / 2h`` for every component k.
Warp's two wrong loop cases (a product carried through a runtime loop, a sum carried
through a loop and used after it) are among them.
"""

import numpy as np
import pytest

import numba_sim as sim

f64 = sim.float64
A = sim.array(dtype=f64)
V3 = sim.array(dtype=sim.vec3d)


@sim.func
def smooth_clamp(a: f64, limit: f64):
    if a > limit:
        return limit + sim.log(a - limit + f64(1.0))
    return a


@sim.func
def weighted_read(values: A, j: int, weight: f64):
    return values[j] * weight + sim.sin(values[j])


@sim.kernel
def arithmetic(x: A, y: A, s: f64):
    i = sim.tid()
    a = x[i]
    b = a * a * s + sim.sin(a) / (f64(2.0) + sim.cos(a))
    y[i] = sim.sqrt(b * b + f64(1.0)) - a ** f64(3.0)


@sim.kernel
def vectors(x: V3, y: A):
    i = sim.tid()
    v = x[i]
    w = sim.vec3d(v.y, f64(2.0) * v.z, v.x * v.x)
    c = sim.cross(v, w)
    y[i] = sim.dot(v, w) * sim.length(c) + c.x + sim.normalize(v)[1]


@sim.kernel
def branches(x: A, y: A, n: int):
    i = sim.tid()
    if i >= n:
        return
    a = x[i]
    if a > f64(0.0):
        b = a * a
    else:
        b = -f64(3.0) * a
    c = b if b < f64(0.5) else b * b
    y[i] = smooth_clamp(c, f64(0.25)) + weighted_read(x, (i + 1) % n, a)


@sim.kernel
def components(x: A, y: A):
    i = sim.tid()
    a = x[i]
    v = sim.vec3d(a, a * a, f64(1.0))
    v.y = f64(3.0) * a
    v[2] = sim.sin(a)
    v.x += a * a
    v[1] -= a
    m = sim.mat22d(a, f64(1.0), f64(2.0), a)
    m[0, 1] = a * f64(5.0)
    y[i] = sim.dot(v, v) + m[0, 1] * m[1, 1] + sim.determinant(m)


@sim.kernel
def keyword_constructors(x: A, y: A):
    # Warp's anonymous constructors: values flattened, compile-time keywords kept
    i = sim.tid()
    a = x[i]
    m = sim.types.matrix(a, f64(2.0) * a, a * a, sim.sin(a), f64(1.0), a, shape=(3, 2))
    fill = sim.matrix(a * a, shape=(2, 2))
    v = sim.types.vector(sim.cos(a), length=5)
    w = sim.vector(a, f64(3.0) * a, a * a)
    q = sim.types.quaternion(w, a)
    y[i] = m[1, 0] * m[2, 1] + m[1, 1] + sim.determinant(fill + sim.identity(n=2, dtype=f64)) \
        + v[4] * sim.dot(w, w) + q.w * q[1]


@sim.kernel
def accumulate_in_place(x: A, n: int, y: A):
    # one thread updates y in place (read, add, store): each store hands its element's
    # adjoint to the stored value, the value it overwrote starts again from zero
    for j in range(n):
        y[j % 2] = y[j % 2] + x[j] * x[j]
    y[2] = y[0] * y[1]


@sim.func
def first_above(values: A, n: int, limit: f64):
    # a return inside a loop: the product up to the first value above the limit
    acc = f64(1.0)
    for j in range(n):
        acc = acc * values[j]
        if values[j] > limit:
            return acc * f64(2.0)
    return acc


@sim.kernel
def return_in_loop(x: A, n: int, y: A):
    i = sim.tid()
    total = f64(0.0)
    for j in range(n):
        total = total + x[j] * x[j]
        if total > f64(0.5) + f64(i):
            y[i] = total * first_above(x, n, f64(0.4))
            return
    y[i] = total


@sim.kernel
def static_loop(x: A, y: A):
    i = sim.tid()
    v = x[i]
    acc = f64(1.0)
    for k in range(3):
        acc = acc * v + f64(k)
    y[i] = acc


@sim.kernel
def running_product(x: A, n: int, y: A):
    # Warp's reverse loop reuses the final carried value: its gradient is wrong here
    acc = f64(1.0)
    for j in range(n):
        acc *= x[j]
    y[0] = acc


@sim.kernel
def sum_used_after(x: A, n: int, y: A):
    # a carried sum used after the loop: Warp's gradient is wrong here too
    total = f64(0.0)
    for j in range(n):
        total += x[j] * x[j]
    y[0] = total * total + total


@sim.kernel
def loop_with_break(x: A, n: int, y: A):
    acc = f64(0.5)
    count = int(0)
    for j in range(n):
        if acc > f64(4.0):
            break
        if x[j] < f64(0.0):
            continue
        acc = acc * (f64(1.0) + x[j])
        count += 1
    y[0] = acc + f64(count)


@sim.kernel
def while_loop(x: A, y: A):
    i = sim.tid()
    v = x[i]
    k = int(0)
    while k < 4:
        v = sim.sin(v) + v * f64(0.5)
        k += 1
    y[i] = v


@sim.kernel
def atomics(x: A, y: A):
    i = sim.tid()
    a = x[i]
    y[0] += a * a
    sim.atomic_sub(y, 1, sim.exp(a))
    sim.atomic_max(y, 2, a * f64(3.0))
    y[3 + i] = a


@sim.kernel
def vector_atomics(v: sim.array(dtype=sim.vec3d), low: sim.array(dtype=sim.vec3d)):
    i = sim.tid()
    sim.atomic_min(low, 0, v[i])
    sim.atomic_max(low, 1, v[i])


@sim.kernel
def noisy_product(x: A, n: int, y: A):
    # random draws in a replayed loop: the adjoint draws the forward pass's numbers again
    i = sim.tid()
    s = sim.rand_init(7, i)
    acc = f64(1.0)
    for j in range(n):
        acc = acc * (x[j] + f64(sim.randf(s)))
    y[i] = acc


@sim.kernel
def neighbours(grid: sim.uint64, points: sim.array(dtype=sim.vec3), x: A, y: A):
    # a hash-grid query loop: the query is not differentiated, what the loop computes is
    i = sim.tid()
    p = points[i]
    total = f64(0.0)
    for j in sim.hash_grid_query(grid, p, 0.3):
        d = sim.length(p - points[j])
        if d < 0.3:
            total += x[j] * x[i] * f64(0.3 - d)
    y[i] = total


@sim.kernel
def neighbours_warp_loop(grid: sim.uint64, points: sim.array(dtype=sim.vec3), x: A, y: A):
    # Warp's spelling of a query loop: while hash_grid_query_next(query, j)
    i = sim.tid()
    p = points[i]
    total = f64(1.0)
    query = sim.hash_grid_query(grid, p, 0.3)
    j = int(0)
    while sim.hash_grid_query_next(query, j):
        if sim.length(p - points[j]) < 0.3:
            total = total * (f64(1.0) + x[j] * x[i])  # a product: the loop is replayed
    y[i] = total


N = 5
POINTS = np.random.default_rng(8).uniform(0.0, 0.4, (N, 3)).astype(np.float32)  # 6 pairs
GRID = sim.HashGrid(4, 4, 4)
GRID.build(POINTS, 0.3)


def _inputs(seed, n, shape=()):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, (n,) + shape)


CASES = {
    # name: (kernel, dim, x (float64), make the argument list from x, output index, output shape)
    "arithmetic": (arithmetic, N, np.abs(_inputs(1, N)) + 0.2,
                   lambda x, y: [x, y, 0.7], 1, (N,)),
    "vectors": (vectors, N, _inputs(2, N, (3,)), lambda x, y: [x, y], 1, (N,)),
    "branches": (branches, N + 2, _inputs(3, N), lambda x, y: [x, y, N], 1, (N,)),
    "static_loop": (static_loop, N, _inputs(4, N), lambda x, y: [x, y], 1, (N,)),
    "components": (components, N, _inputs(13, N), lambda x, y: [x, y], 1, (N,)),
    "keyword_constructors": (keyword_constructors, N, _inputs(16, N), lambda x, y: [x, y], 1,
                             (N,)),
    "return_in_loop": (return_in_loop, 3, np.array([0.3, 0.2, 0.5, 0.6, 0.1]),
                       lambda x, y: [x, N, y], 2, (3,)),
    "accumulate_in_place": (accumulate_in_place, 1, _inputs(14, N),
                            lambda x, y: [x, N, y], 2, (3,)),
    "running_product": (running_product, 1, _inputs(5, N) + 1.5,
                        lambda x, y: [x, N, y], 2, (1,)),
    "sum_used_after": (sum_used_after, 1, _inputs(6, N), lambda x, y: [x, N, y], 2, (1,)),
    "loop_with_break": (loop_with_break, 1, np.array([0.6, -0.3, 0.9, 0.8, 0.7, 0.5]),
                        lambda x, y: [x, 6, y], 2, (1,)),
    "while_loop": (while_loop, N, _inputs(7, N), lambda x, y: [x, y], 1, (N,)),
    "atomics": (atomics, N, np.array([0.3, -0.2, 0.9, 0.1, 0.5]),
                lambda x, y: [x, y], 1, (3 + N,)),
    "noisy_product": (noisy_product, 2, _inputs(9, 3), lambda x, y: [x, 3, y], 2, (2,)),
    "neighbours": (neighbours, N, _inputs(12, N),
                   lambda x, y: [GRID.id, POINTS, x, y], 3, (N,)),
    "neighbours_warp_loop": (neighbours_warp_loop, N, _inputs(15, N),
                             lambda x, y: [GRID.id, POINTS, x, y], 3, (N,)),
}


def _forward(case, x):
    kernel, dim, _, arguments, out, shape = CASES[case]
    y = np.zeros(shape)
    if case == "atomics":
        y[2] = -10.0  # atomic_max's start
    sim.launch(kernel, dim, inputs=arguments(x, y))
    return y


def _gradient(case, x, weights):
    kernel, dim, _, arguments, out, shape = CASES[case]
    x = sim.requires_grad(x.copy())
    y = sim.zeros(shape, dtype=f64, requires_grad=True)
    if case == "atomics":
        y[2] = -10.0
    tape = sim.Tape()
    with tape:
        sim.launch(kernel, dim, inputs=arguments(x, y))
    tape.backward(grads=[(y, weights)])
    return sim.grad(x).copy(), y


def _finite_differences(case, x, weights, h=1e-6):
    gradient = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[k] += h
        minus[k] -= h
        gradient[k] = (weights @ _forward(case, plus).ravel()
                       - weights @ _forward(case, minus).ravel()) / (2 * h)
    return gradient


@pytest.mark.parametrize("case", sorted(CASES))
def test_adjoint_matches_central_differences(case):
    x = CASES[case][2].astype(np.float64)
    shape = CASES[case][5]
    weights = np.random.default_rng(10).uniform(0.5, 1.5, int(np.prod(shape)))
    gradient, y = _gradient(case, x, weights.reshape(shape))
    np.testing.assert_allclose(y, _forward(case, x))  # the forward ran under the tape
    expected = _finite_differences(case, x, weights)
    assert np.any(expected != 0)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


def test_loop_product_gradient_is_exact_where_warp_reuses_the_final_value():
    x = np.array([0.5, 2.0, 3.0, 0.7])
    gradient, _ = _gradient("running_product", np.pad(x, (0, 1), constant_values=1.0),
                            np.ones(1))
    np.testing.assert_allclose(gradient[:4], np.prod(x) / x, rtol=1e-12)


def test_additive_and_replayed_loops_take_their_paths():
    # the additive carry is swept in one pass; the product replays the loop per iteration
    additive = sum_used_after.inspect(kind="source", adjoint=True)
    replayed = running_product.inspect(kind="source", adjoint=True)
    assert "range(n__c" not in additive and "range(n__c" in replayed


def test_own_index_reads_accumulate_without_atomics():
    source = arithmetic.inspect(kind="source", adjoint=True)
    assert "__sim_atomic_add" not in source and "adj_x[i__" in source
    assert "__sim_atomic_add(adj_x" in running_product.inspect(kind="source", adjoint=True)


def test_a_two_dimensional_launch_differentiates_each_element():
    @sim.kernel
    def scale_rows(x: sim.array(dtype=f64, ndim=2), y: sim.array(dtype=f64, ndim=2)):
        i, j = sim.tid()
        y[i, j] = x[i, j] * x[i, j] * f64(j + 1)

    x = sim.requires_grad(np.arange(6.0).reshape(2, 3))
    y = sim.zeros((2, 3), dtype=f64, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(scale_rows, (2, 3), inputs=[x, y])
    tape.backward(grads=[(y, np.ones((2, 3)))])
    np.testing.assert_allclose(sim.grad(x), 2 * x * np.array([1.0, 2.0, 3.0]))


def test_custom_adjoint_replaces_the_generated_one():
    @sim.func
    def cube(a: f64):
        return a * a * a

    @sim.func_grad(cube)
    def adj_cube(a: f64, adj_ret: f64):
        sim.adjoint[a] += f64(100.0) * adj_ret  # deliberately not 3 a^2: the custom one runs

    @sim.kernel
    def apply_cube(x: A, y: A):
        i = sim.tid()
        y[i] = cube(x[i])

    x = sim.requires_grad(np.array([1.0, 2.0]))
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(apply_cube, 2, inputs=[x, y])
    tape.backward(grads=[(y, np.array([1.0, 0.5]))])
    np.testing.assert_allclose(sim.grad(x), [100.0, 50.0])


@sim.struct
class _Pair:
    a: f64
    v: sim.vec3d


def test_custom_adjoints_of_struct_fields_and_of_each_result():
    """Warp's forms: ``sim.adjoint[x.field]`` for a struct parameter, and one adjoint
    parameter per result of a func returning a tuple (adj_ret0, adj_ret1)."""
    @sim.func
    def split(p: _Pair, b: f64):
        return p.a * b, p.v[1] * b

    @sim.func_grad(split)
    def adj_split(p: _Pair, b: f64, adj_ret0: f64, adj_ret1: f64):
        sim.adjoint[p.a] += f64(10.0) * adj_ret0  # not b: the custom one runs
        sim.adjoint[p.v][1] += f64(20.0) * adj_ret1
        sim.adjoint[b] += f64(3.0) * adj_ret0 + f64(4.0) * adj_ret1

    @sim.kernel
    def apply_split(pairs: sim.array(dtype=_Pair), b: A, y: A, z: A):
        i = sim.tid()
        u, w = split(pairs[i], b[i])
        y[i] = u
        z[i] = w

    pair = _Pair()
    pair.a = f64(1.5)
    pair.v = sim.vec3d(1.0, 2.0, 3.0)
    pairs = sim.array([pair, pair], dtype=_Pair, requires_grad=True)
    b = sim.requires_grad(np.array([2.0, 3.0]))
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    z = sim.zeros(2, dtype=f64, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(apply_split, 2, inputs=[pairs, b, y, z])
    np.testing.assert_allclose(y, [3.0, 4.5])
    tape.backward(grads=[(y, np.array([1.0, 0.5])), (z, np.array([1.0, 2.0]))])
    np.testing.assert_allclose(sim.grad(b), [3.0 + 4.0, 1.5 + 8.0])
    # (an array of structs gets no gradient from a kernel yet: the struct's adjoint is
    # read from the custom adjoint itself)
    custom = split._sim_custom_adjoint[0]

    @sim.kernel
    def struct_adjoint(pairs: sim.array(dtype=_Pair), out: A):
        i = sim.tid()
        adj_p, adj_b = custom(pairs[i], f64(2.0), (f64(1.0), f64(0.5)))
        out[3 * i] = adj_p.a
        out[3 * i + 1] = adj_p.v[1]
        out[3 * i + 2] = adj_b

    out = np.zeros(6)
    sim.launch(struct_adjoint, 2, inputs=[pairs, out])
    np.testing.assert_allclose(out, [10.0, 10.0, 5.0] * 2)


def test_custom_adjoint_with_branches_and_adj_named_locals():
    # Warp's test_name_clash: a compound statement in the body, locals named adj_<param>
    @sim.func
    def add(a: f64, b: f64):
        return a + b

    @sim.func_grad(add)
    def adj_add(a: f64, b: f64, adj_ret: f64):
        adj_a = f64(0.0)
        adj_b = f64(0.0)
        if a < f64(0.0):
            adj_a = adj_ret
        for _ in range(2):
            if b > f64(0.0):
                adj_b += adj_ret
        sim.adjoint[a] += adj_a
        sim.adjoint[b] += adj_b

    @sim.kernel
    def apply_add(x: A, z: A, y: A):
        i = sim.tid()
        y[i] = add(x[i], z[i])

    x = sim.requires_grad(np.array([1.0, -2.0, 3.0]))
    z = sim.requires_grad(np.array([4.0, 5.0, -6.0]))
    y = sim.zeros(3, dtype=f64, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(apply_add, 3, inputs=[x, z, y])
    tape.backward(grads=[(y, np.ones(3))])
    np.testing.assert_allclose(sim.grad(x), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(sim.grad(z), [2.0, 2.0, 0.0])


def test_reversed_range_loops_are_differentiated():
    # Warp's for_loop_reversed_strided_grad: the reversed range stays in the loop header
    @sim.kernel
    def strided(n: int, stride: int, x: A, s: A):
        tid = sim.tid()
        acc = f64(0.0)
        for i in reversed(range(tid, n, stride)):
            acc = acc + x[i] * x[i]
        sim.atomic_add(s, 0, acc)

    x = sim.requires_grad(np.arange(1.0, 8.0))
    s = sim.zeros(1, dtype=f64, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(strided, 3, inputs=[7, 3, x, s])
    np.testing.assert_allclose(s, [(x * x).sum()])
    tape.backward(loss=s)
    np.testing.assert_allclose(sim.grad(x), 2 * x)


def test_float32_kernel_gradients():
    @sim.kernel
    def square_sum(x: sim.array(dtype=float), y: sim.array(dtype=float)):
        i = sim.tid()
        y[0] += x[i] * x[i] + 1.0

    x = sim.from_numpy(np.array([1.0, -2.0, 0.5], np.float32), requires_grad=True)
    y = sim.zeros(1, dtype=float, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(square_sum, 3, inputs=[x, y])
    tape.backward(loss=y)
    assert sim.grad(x).dtype == np.float32
    np.testing.assert_allclose(sim.grad(x), 2 * x)


def test_adjoint_kernel_compiles_and_links_for_cuda_offline(offline_cuda):
    x, y = np.zeros(N), np.zeros(N)
    library = branches.compile("cuda", [x, y, N], cc=(7, 5), adjoint=True)
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"
    for kernel, arguments in ((running_product, [x, N, np.zeros(1)]),
                              (vectors, [np.zeros((N, 3)), y]),
                              (noisy_product, [x, 3, np.zeros(2)]),
                              (atomics, [x, np.zeros(3 + N)]),
                              (vector_atomics, [np.zeros((N, 3)), np.zeros((2, 3))])):
        library = kernel.compile("cuda", arguments, cc=(7, 5), adjoint=True)
        assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF", kernel.key


# --------------------------------------------------------------------------
# Warp's Tape on the CPU, for the kernels where Warp is right


@pytest.fixture(scope="module")
def warp():
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    wp.init()
    return wp


def test_same_gradients_as_warps_tape(warp):
    wp = warp

    @wp.kernel
    def warp_arithmetic(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
                        s: wp.float64):
        i = wp.tid()
        a = x[i]
        b = a * a * s + wp.sin(a) / (wp.float64(2.0) + wp.cos(a))
        y[i] = wp.sqrt(b * b + wp.float64(1.0)) - a ** wp.float64(3.0)

    @wp.kernel
    def warp_atomics(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        a = x[i]
        y[0] += a * a
        wp.atomic_sub(y, 1, wp.exp(a))
        wp.atomic_max(y, 2, a * wp.float64(3.0))
        y[3 + i] = a

    @wp.kernel
    def warp_vectors(x: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.float64)):
        i = wp.tid()
        v = x[i]
        w = wp.vec3d(v[1], wp.float64(2.0) * v[2], v[0] * v[0])
        c = wp.cross(v, w)
        y[i] = wp.dot(v, w) * wp.length(c) + c[0] + wp.normalize(v)[1]

    for case, warp_kernel, scalar in (("arithmetic", warp_arithmetic, [0.7]),
                                      ("atomics", warp_atomics, []),
                                      ("vectors", warp_vectors, [])):
        x = CASES[case][2].astype(np.float64)
        shape = CASES[case][5]
        weights = np.random.default_rng(11).uniform(0.5, 1.5, shape)
        ours, _ = _gradient(case, x, weights)
        wx = wp.array(x, dtype=wp.vec3d if x.ndim == 2 else wp.float64, requires_grad=True,
                      device="cpu")
        start = np.zeros(shape)
        if case == "atomics":
            start[2] = -10.0
        wy = wp.array(start, dtype=wp.float64, requires_grad=True, device="cpu")
        tape = wp.Tape()
        with tape:
            wp.launch(warp_kernel, dim=CASES[case][1], inputs=[wx, wy] + scalar, device="cpu")
        tape.backward(grads={wy: wp.array(weights, dtype=wp.float64, device="cpu")})
        np.testing.assert_allclose(ours, wx.grad.numpy(), rtol=1e-10, err_msg=case)


# --------------------------------------------------------------------------
# A simulation step under the tape: springs (a func, index arrays, a struct, atomics on
# vec3 arrays, an early return), an integrator (a pinned particle), a loss


@sim.struct
class SpringParams:
    ke: f64


@sim.func
def spring_force(xi: sim.vec3d, xj: sim.vec3d, rest: f64, ke: f64):
    d = xj - xi
    length = sim.length(d)
    return d / length * (ke * (length - rest))


@sim.kernel
def springs(x: V3, pairs: sim.array(dtype=sim.int32), rest: A, p: SpringParams, f: V3):
    t = sim.tid()
    i = pairs[2 * t]
    j = pairs[2 * t + 1]
    if i < 0:
        return
    force = spring_force(x[i], x[j], rest[t], p.ke)
    sim.atomic_add(f, i, force)
    sim.atomic_sub(f, j, force)


@sim.kernel
def integrate(x: V3, v: V3, f: V3, inv_mass: A, dt: f64, x_out: V3, v_out: V3):
    i = sim.tid()
    w = inv_mass[i]
    if w == f64(0.0):
        x_out[i] = x[i]
        v_out[i] = v[i]
        return
    v1 = v[i] + (f[i] * w + sim.vec3d(f64(0.0), f64(-9.8), f64(0.0))) * dt
    x_out[i] = x[i] + v1 * dt
    v_out[i] = v1


@sim.kernel
def energy(x: V3, loss: A):
    i = sim.tid()
    loss[0] += sim.dot(x[i], x[i]) * f64(0.5) + x[i][1]


def _spring_step(x0, v0):
    pairs = np.array([0, 1, 1, 2, 2, 3, -1, 0], np.int32)
    params = SpringParams()
    params.ke = 10.0
    x, v = sim.requires_grad(x0.copy()), sim.requires_grad(v0.copy())
    f, x1, v1 = (sim.zeros(4, dtype=sim.vec3d, requires_grad=True) for _ in range(3))
    loss = sim.zeros(1, dtype=f64, requires_grad=True)
    sim.launch(springs, 4, inputs=[x, pairs, np.array([0.5, 0.6, 0.7, 0.0]), params, f])
    sim.launch(integrate, 4, inputs=[x, v, f, np.array([0.0, 1.0, 2.0, 1.0]), 0.01, x1, v1])
    sim.launch(energy, 4, inputs=[x1, loss])
    return x, v, loss


def test_a_spring_step_under_the_tape_matches_central_differences():
    rng = np.random.default_rng(0)
    x0, v0 = rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4, 3))
    tape = sim.Tape()
    with tape:
        x, v, loss = _spring_step(x0, v0)
    tape.backward(loss=loss)
    h = 1e-6
    for start, gradient, which in ((x0, sim.grad(x), 0), (v0, sim.grad(v), 1)):
        expected = np.zeros_like(start)
        for k in np.ndindex(start.shape):
            plus, minus = [x0.copy(), v0.copy()], [x0.copy(), v0.copy()]
            plus[which][k] += h
            minus[which][k] -= h
            expected[k] = (_spring_step(*plus)[2][0] - _spring_step(*minus)[2][0]) / (2 * h)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


# an overloaded func (two module-level definitions under one name) with a custom adjoint of
# each overload: @sim.func_grad picks the overload by its function's leading annotations
# (calls of the overloaded name are not differentiated yet; each overload called by itself is)


@sim.func
def twice_overloaded(a: f64):
    return a * a


@sim.func
def twice_overloaded(a: sim.vec3d):  # noqa: F811 (an overload, as in Warp)
    return sim.dot(a, a)


@sim.func_grad(twice_overloaded)
def adj_twice_overloaded_scalar(a: f64, adj_ret: f64):
    sim.adjoint[a] += f64(10.0) * adj_ret  # not 2 a: the custom one runs


@sim.func_grad(twice_overloaded)
def adj_twice_overloaded_vector(a: sim.vec3d, adj_ret: f64):
    sim.adjoint[a] += sim.vec3d(f64(1.0), f64(2.0), f64(3.0)) * adj_ret


overload_scalar, overload_vector = twice_overloaded.members


def test_custom_adjoints_of_an_overloaded_func_go_to_their_overloads():
    @sim.kernel
    def apply_both(x: A, v: V3, y: A):
        i = sim.tid()
        y[i] = overload_scalar(x[i]) + overload_vector(v[i])

    x = sim.requires_grad(np.array([1.0, 2.0]))
    v = sim.requires_grad(np.ones((2, 3)))
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    with sim.Tape() as tape:
        sim.launch(apply_both, 2, inputs=[x, v, y])
    np.testing.assert_allclose(y, [4.0, 7.0])
    tape.backward(grads=[(y, np.array([1.0, 0.5]))])
    np.testing.assert_allclose(sim.grad(x), [10.0, 5.0])
    np.testing.assert_allclose(sim.grad(v), [[1.0, 2.0, 3.0], [0.5, 1.0, 1.5]])
    with pytest.raises(TypeError, match="no overload of twice_overloaded"):
        @sim.func_grad(twice_overloaded)
        def adj_wrong(a: int, adj_ret: f64):
            pass


M22 = sim.array(dtype=sim.mat22d)


@sim.kernel
def element_components(x: A, v: V3, m: M22):
    # stores into components of array elements (Warp's arr[i].x = a), slice reads and stores
    i = sim.tid()
    a = x[i]
    v[i].x = a * a
    v[i][2] = sim.sin(a)
    v[i].y += f64(3.0) * a
    v[i][2] -= a
    m[i][0, 1] = a * f64(2.0)
    m[i][1] = sim.vec2d(a, a * a)[::-1]
    w = sim.vec3d(a, f64(2.0) * a, a * a * a)
    w[:2] = sim.vec2d(sim.cos(a), a)
    m[i][0, 0] += w[1:][1] + w[0]


def _element_components(x, v0, m0, weights_v, weights_m, tape=False):
    v, m = v0.copy(), m0.copy()
    if not tape:
        sim.launch(element_components, len(x), inputs=[x, v, m])
        return float(np.sum(weights_v * v) + np.sum(weights_m * m))
    x, v, m = sim.requires_grad(x.copy()), sim.requires_grad(v), sim.requires_grad(m)
    t = sim.Tape()
    with t:
        sim.launch(element_components, len(x), inputs=[x, v, m])
    t.backward(grads=[(v, weights_v), (m, weights_m)])
    return sim.grad(x).copy(), sim.grad(v).copy(), sim.grad(m).copy()


def test_component_stores_into_array_elements_match_central_differences():
    rng = np.random.default_rng(17)
    x, v0, m0 = _inputs(17, N), rng.uniform(-1, 1, (N, 3)), rng.uniform(-1, 1, (N, 2, 2))
    weights_v, weights_m = rng.uniform(0.5, 1.5, (N, 3)), rng.uniform(0.5, 1.5, (N, 2, 2))
    gradients = _element_components(x, v0, m0, weights_v, weights_m, tape=True)
    h = 1e-6
    for gradient, base in zip(gradients, (x, v0, m0)):
        expected = np.zeros_like(base)
        for k in np.ndindex(base.shape):
            shifted = []
            for step in (h, -h):
                moved = [x, v0, m0]
                changed = base.copy()
                changed[k] += step
                moved[[id(b) for b in moved].index(id(base))] = changed
                shifted.append(_element_components(*moved, weights_v, weights_m))
            expected[k] = (shifted[0] - shifted[1]) / (2 * h)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)
    # overwritten components pass no gradient to the values they overwrote
    assert np.all(gradients[1][:, [0, 2]] == 0) and np.all(gradients[1][:, 1] != 0)
    assert np.all(gradients[2][:, 1, :] == 0) and np.all(gradients[2][:, 0, 1] == 0)


@sim.kernel
def scaled_component(x: A, v: V3):
    i = sim.tid()
    v[i].x *= x[i]


def test_a_component_update_other_than_add_or_subtract_is_a_clear_error():
    x, v = sim.requires_grad(np.ones(2)), sim.requires_grad(np.ones((2, 3)))
    t = sim.Tape()
    with t:
        sim.launch(scaled_component, 2, inputs=[x, v])
    with pytest.raises(Exception, match=r"only `=`, `\+=` and `-=` of a component of an array"):
        t.backward(grads=[(v, np.ones((2, 3)))])


# --------------------------------------------------------------------------
# Warp's sim.grad(f)(*args) in forward code


@sim.func
def cube_of(x: f64):
    return x * x * x


@sim.func
def scaled_gradient(x: f64):
    g = sim.grad(cube_of)  # a local bound to the gradient
    return g(x) * f64(0.5)


@sim.kernel(enable_backward=False)
def gradients_in_forward_code(x: A, out: A):
    i = sim.tid()
    out[4 * i] = sim.grad(cube_of)(x[i])
    b, a = sim.grad(sim.atan2)(x[i], f64(2.0))
    out[4 * i + 1] = b
    out[4 * i + 2] = a
    out[4 * i + 3] = scaled_gradient(x[i])


def test_grad_of_a_function_in_forward_code_is_its_derivative():
    x = np.array([0.5, -1.0, 2.0])
    out = np.zeros(12)
    sim.launch(gradients_in_forward_code, 3, inputs=[x, out])
    out = out.reshape(3, 4)
    np.testing.assert_allclose(out[:, 0], 3 * x * x)
    np.testing.assert_allclose(out[:, 1], 2.0 / (x * x + 4.0))  # d atan2(y, 2) / dy
    np.testing.assert_allclose(out[:, 2], -x / (x * x + 4.0))  # d atan2(y, x) / dx at x = 2
    np.testing.assert_allclose(out[:, 3], 1.5 * x * x)


def test_grad_locals_are_static_handles():
    def rebound(out: A):
        g = sim.grad(cube_of)
        g = f64(1.0)
        out[0] = g

    with pytest.raises(sim.WarpCodegenError, match="Cannot reassign local 'g' after binding "
                                                   "it to wp.grad"):
        sim.launch(sim.kernel(rebound), 1, inputs=[np.zeros(1)])

    def of_an_array_func(out: A):
        out[0] = sim.grad(sum_of)(out)

    with pytest.raises(sim.WarpCodegenError, match=r"sim.grad\(sum_of\): a func with array"):
        sim.launch(sim.kernel(of_an_array_func), 1, inputs=[np.zeros(1)])


@sim.func
def sum_of(a: A):
    return a[0]


def test_gradient_kernel_compiles_for_cuda_offline(offline_cuda):
    library = gradients_in_forward_code.compile("cuda", [np.zeros(3), np.zeros(12)], cc=(7, 5))
    assert bytes(library.get_cubin(cc=(7, 5)).code)[:4] == b"\x7fELF"


@sim.func
def counted_scale(counter: sim.array(dtype=sim.int32), x: f64, s: f64):
    return x * s


@sim.func_grad(counted_scale)
def adj_counted_scale(counter: sim.array(dtype=sim.int32), x: f64, s: f64, adj_ret: f64):
    sim.atomic_add(counter, 0, 1)
    sim.adjoint[x] += adj_ret * s
    sim.adjoint[s] += adj_ret * x


@sim.kernel
def counted_product(counter: sim.array(dtype=sim.int32), x: A, s: A, y: A):
    i = sim.tid()
    y[i] = counted_scale(counter, x[i], s[i])


def test_custom_adjoint_of_a_func_with_an_integer_array_parameter():
    counter = np.zeros(1, np.int32)
    x = sim.from_numpy(np.array([1.0, 2.0]), dtype=f64, requires_grad=True)
    s = sim.from_numpy(np.array([3.0, 4.0]), dtype=f64, requires_grad=True)
    y = sim.zeros(2, dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(counted_product, 2, inputs=[counter, x, s, y])
    tape.backward(grads=[(y, np.ones(2))])
    np.testing.assert_array_equal(sim.grad(x), [3.0, 4.0])
    np.testing.assert_array_equal(sim.grad(s), [1.0, 2.0])
    assert counter[0] == 2  # the custom adjoint ran once per thread


@sim.kernel
def squared_row(x: sim.array2d(dtype=f64), y: sim.array2d(dtype=f64), row: int):
    i = sim.tid()
    x_row = x[row]  # views of the parameters: read and written through their parents
    y_row = y[row]
    y_row[i] = x_row[i] * x_row[i]


def test_array_views_bound_to_locals_are_differentiated_through_their_parents():
    x = sim.from_numpy(np.arange(6.0).reshape(2, 3), dtype=f64, requires_grad=True)
    y = sim.zeros((2, 3), dtype=f64, requires_grad=True)
    tape = sim.Tape()
    with tape:
        sim.launch(squared_row, 3, inputs=[x, y, 1])
    np.testing.assert_array_equal(y, [[0.0, 0.0, 0.0], [9.0, 16.0, 25.0]])
    tape.backward(grads=[(y, np.ones((2, 3)))])
    np.testing.assert_array_equal(sim.grad(x), [[0.0, 0.0, 0.0], [6.0, 8.0, 10.0]])
    from numba_sim.autodiff.adjoint_kernel import adjoint_source_text

    assert "x_row" not in adjoint_source_text(squared_row)  # read through x itself
