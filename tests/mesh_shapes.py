"""Closed, consistently wound test meshes (counter-clockwise seen from outside), and
brute-force references over all triangles in float64, shared by the mesh tests and
benchmarks/bench_mesh.py."""

import numpy as np


def cube(half=1.0):
    """The cube [-half, half]^3: 8 points, 12 triangles."""
    points = np.array([[x, y, z] for x in (-half, half) for y in (-half, half)
                       for z in (-half, half)], dtype=np.float32)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    triangles = []
    for a, b, c, d in quads:
        triangles += [(a, b, c), (a, c, d)]
    return points, np.array(triangles, dtype=np.int32)


def icosphere(level, radius=1.0):
    """The icosahedron subdivided ``level`` times, points on the sphere: 20 * 4^level triangles."""
    t = (1.0 + 5.0**0.5) / 2.0
    points = np.array([[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t],
                       [0, -1, -t], [0, 1, -t], [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]],
                      dtype=np.float64)
    faces = np.array([[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9],
                      [5, 11, 4], [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2],
                      [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10],
                      [8, 6, 7], [9, 8, 1]])
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    for _ in range(level):
        edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]),
                        axis=1)
        keys, inverse = np.unique(edges[:, 0] * len(points) + edges[:, 1], return_inverse=True)
        middle = points[keys // len(points)] + points[keys % len(points)]
        middle /= np.linalg.norm(middle, axis=1, keepdims=True)
        m = inverse.reshape(3, -1).T + len(points)  # midpoints of edges 01, 12, 20
        points = np.concatenate([points, middle])
        faces = np.concatenate([np.stack([faces[:, 0], m[:, 0], m[:, 2]], 1),
                                np.stack([faces[:, 1], m[:, 1], m[:, 0]], 1),
                                np.stack([faces[:, 2], m[:, 2], m[:, 1]], 1), m])
    return (points * radius).astype(np.float32), faces.astype(np.int32)


def torus(major=1.0, minor=0.35, rings=24, sides=12):
    """A torus around z (not convex: saddle vertices inside the hole)."""
    u, v = np.meshgrid(np.arange(rings) * 2 * np.pi / rings, np.arange(sides) * 2 * np.pi / sides,
                       indexing="ij")
    points = np.stack([(major + minor * np.cos(v)) * np.cos(u),
                       (major + minor * np.cos(v)) * np.sin(u), minor * np.sin(v)], -1)
    index = np.arange(rings * sides).reshape(rings, sides)
    a, b = index, np.roll(index, -1, axis=0)
    c, d = np.roll(b, -1, axis=1), np.roll(a, -1, axis=1)
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3),
                            np.stack([a, c, d], -1).reshape(-1, 3)])
    return points.reshape(-1, 3).astype(np.float32), faces.astype(np.int32)


# --------------------------------------------------------------------------
# Brute force (float64)


def triangles_of(points, faces):
    tri = points.astype(np.float64)[faces]
    return tri[:, 0], tri[:, 1], tri[:, 2]


def closest_points(points, faces, queries):
    """Per query: (squared distance, face) of the nearest non-degenerate triangle."""
    a, b, c = triangles_of(points, faces)
    keep = np.linalg.norm(np.cross(b - a, c - a), axis=1) > 0
    a, b, c = a[keep], b[keep], c[keep]
    face_ids = np.nonzero(keep)[0]
    best = np.full(len(queries), np.inf)
    best_face = np.full(len(queries), -1)
    for start in range(0, len(queries), 256):
        p = queries[start:start + 256, None, :].astype(np.float64)
        q = _closest_on_triangles(a[None], b[None], c[None], p)
        d2 = ((q - p) ** 2).sum(-1)
        k = d2.argmin(axis=1)
        best[start:start + 256] = d2[np.arange(len(p)), k]
        best_face[start:start + 256] = face_ids[k]
    return best, best_face


def _closest_on_triangles(a, b, c, p):
    """Ericson's closest point, vectorized over broadcast (..., 3) arrays."""
    ab, ac, ap = b - a, c - a, p - a

    def dot(x, y):
        return (x * y).sum(-1, keepdims=True)

    d1, d2 = dot(ab, ap), dot(ac, ap)
    bp = p - b
    d3, d4 = dot(ab, bp), dot(ac, bp)
    cp = p - c
    d5, d6 = dot(ab, cp), dot(ac, cp)
    vc = d1 * d4 - d3 * d2
    vb = d5 * d2 - d1 * d6
    va = d3 * d6 - d5 * d4
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = 1.0 / (va + vb + vc)
        result = a + ab * (vb * denom) + ac * (vc * denom)
        regions = [
            (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0),
            (vb <= 0) & (d2 >= 0) & (d6 <= 0),
            (d6 >= 0) & (d5 <= d6),
            (vc <= 0) & (d1 >= 0) & (d3 <= 0),
            (d3 >= 0) & (d4 <= d3),
            (d1 <= 0) & (d2 <= 0),
        ]
        values = [
            b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))),
            a + ac * (d2 / (d2 - d6)),
            c + 0 * p,
            a + ab * (d1 / (d1 - d3)),
            b + 0 * p,
            a + 0 * p,
        ]
    for region, value in zip(regions, values):  # the earliest test wins, as in Ericson's order
        result = np.where(region, value, result)
    return result


def ray_hits(points, faces, start, direction):
    """All (t, face) hits of the ray (t >= 0), Möller-Trumbore in float64, sorted by t."""
    a, b, c = triangles_of(points, faces)
    start = np.asarray(start, np.float64)
    direction = np.asarray(direction, np.float64)
    e1, e2 = b - a, c - a
    pvec = np.cross(direction, e2)
    det = (e1 * pvec).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        tvec = start - a
        u = (tvec * pvec).sum(1) * inv
        qvec = np.cross(tvec, e1)
        v = (direction * qvec).sum(1) * inv
        t = (e2 * qvec).sum(1) * inv
        hit = (det != 0) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    order = np.argsort(t[hit], kind="stable")
    return t[hit][order], np.nonzero(hit)[0][order]


def winding_numbers(points, faces, queries):
    """Generalized winding numbers (1 inside, 0 outside a closed mesh; Van Oosterom-Strackee)."""
    a, b, c = triangles_of(points, faces)
    out = np.zeros(len(queries))
    for start in range(0, len(queries), 256):
        p = queries[start:start + 256, None, :].astype(np.float64)
        x, y, z = a[None] - p, b[None] - p, c[None] - p
        lx, ly, lz = (np.linalg.norm(v, axis=-1) for v in (x, y, z))
        numerator = (x * np.cross(y, z)).sum(-1)
        denominator = (lx * ly * lz + (x * y).sum(-1) * lz + (y * z).sum(-1) * lx
                       + (z * x).sum(-1) * ly)
        out[start:start + 256] = np.arctan2(numerator, denominator).sum(1) / (2 * np.pi)
    return out
