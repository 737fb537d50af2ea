"""A fast picture of particles and triangle meshes: projection and z-buffer in compiled code.

matplotlib draws 100,000 points in 3D in about 0.7 s; this draws them in milliseconds, so
that a demo's frames, an animation and the physics viewers cost little next to the
simulation. A :class:`View` fixes the camera for a whole animation (fitted to every frame's
bounds), :meth:`View.frame` draws one frame into an RGB array: a grey ground plane at y = 0,
particles as discs and triangles flat-shaded, both coloured by height through a colour map,
nearest first; then the title, the axis directions and a colour bar with its scale. PNG and
GIF files are written by Pillow (which matplotlib brings). Coordinates are y-up, as the
simulations use.
"""

import math

import numba
import numpy as np

WIDTH, HEIGHT = 720, 560
BACKGROUND = (255, 255, 255)
GROUND = np.array([214, 214, 214], np.float32)
COLORBAR_WIDTH = 90


def _colormap(name="viridis", size=256):
    """(size, 3) uint8 colours of a matplotlib colour map (a blue-to-yellow ramp without it)."""
    try:
        from matplotlib import colormaps

        return (colormaps[name](np.linspace(0.0, 1.0, size))[:, :3] * 255).astype(np.uint8)
    except ImportError:
        t = np.linspace(0.0, 1.0, size)[:, None]
        return (np.array([[68, 1, 84]]) * (1 - t) + np.array([[253, 231, 37]]) * t).astype(np.uint8)


class View:
    """A camera fitted to *bounds* (a (2, 3) array of lowest and highest corners), looking
    from the azimuth and elevation in degrees (matplotlib's default 3D view)."""

    def __init__(self, bounds, width=WIDTH, height=HEIGHT, azimuth=-60.0, elevation=25.0,
                 colormap="viridis"):
        low, high = np.asarray(bounds, np.float64)
        low, high = np.minimum(low, high), np.maximum(low, high)
        low[1] = min(low[1], 0.0)  # the ground is in the picture
        self.low, self.high = low, high
        self.center = (low + high) / 2.0
        self.radius = max(float(np.linalg.norm(high - low)) / 2.0, 1e-6)
        a, e = math.radians(azimuth), math.radians(elevation)
        # y up; the camera looks at the centre from (cos e sin a, sin e, cos e cos a)
        back = np.array([math.cos(e) * math.sin(a), math.sin(e), math.cos(e) * math.cos(a)])
        right = np.cross([0.0, 1.0, 0.0], back)
        right /= np.linalg.norm(right)
        up = np.cross(back, right)
        self.rotation = np.stack([right, up, back]).astype(np.float64)
        self.width, self.height = width, height
        self.plot_width = width - COLORBAR_WIDTH
        self.scale = 0.46 * min(self.plot_width, height) / self.radius
        self.colors = _colormap(colormap)
        self.value_range = (float(low[1]), float(high[1]) if high[1] > low[1] else low[1] + 1.0)

    @classmethod
    def fitted(cls, *position_sets, **options):
        """A view of every finite point in the position arrays (e.g. all frames)."""
        finite = [p[np.all(np.isfinite(p), axis=1)] for p in map(np.asarray, position_sets)]
        finite = [p for p in finite if len(p)] or [np.zeros((1, 3))]
        stacked = np.concatenate(finite)
        return cls(np.stack([stacked.min(axis=0), stacked.max(axis=0)]), **options)

    def project(self, points):
        """Screen x, y (pixels) and depth (larger: nearer) of (n, 3) points."""
        return _project(np.asarray(points), self.center, self.rotation, self.scale,
                        self.plot_width / 2.0, self.height / 2.0)

    def frame(self, positions=None, triangles=None, title="", point_radius=None, discs=None):
        """An (height, width, 3) uint8 picture of particles (*positions*, (n, 3)) and, with
        *triangles* ((m, 3) indices into *positions*), of the mesh they make; *discs*
        ((k, 3)) are more particles drawn beside a mesh."""
        image = np.empty((self.height, self.width, 3), np.uint8)
        image[:] = BACKGROUND
        depth = np.full((self.height, self.width), -np.inf, np.float32)
        self._ground(image, depth)
        if positions is not None and len(positions):
            points = np.asarray(positions)
            if triangles is not None and len(triangles):
                x, y, z = self.project(points)
                light = self.rotation[2]  # lit from the camera
                _triangles(image, depth, x, y, z, points.astype(np.float32, copy=False),
                           np.asarray(triangles, np.int64), self._shades(points[:, 1]),
                           light.astype(np.float32))
            else:
                discs = points if discs is None else np.concatenate([points, discs])
        if discs is not None and len(discs):
            discs = np.asarray(discs)
            x, y, z = self.project(discs)
            radius = point_radius if point_radius is not None else _point_radius(len(discs))
            _discs(image, depth, x, y, z, self._shades(discs[:, 1]), np.float32(radius))
        return self._annotate(image, title)

    def _shades(self, heights):
        low, high = self.value_range
        return _shades(np.asarray(heights), low, high, self.colors)

    def _ground(self, image, depth):
        extent = max(self.radius, 1.0) * 1.2
        cx, cz = self.center[0], self.center[2]
        corners = np.array([[cx - extent, 0.0, cz - extent], [cx + extent, 0.0, cz - extent],
                            [cx + extent, 0.0, cz + extent], [cx - extent, 0.0, cz + extent]])
        x, y, z = self.project(corners)
        shade = np.tile(GROUND, (4, 1))
        behind = z - np.float32(1e-3 * self.radius)  # what touches the ground is drawn over it
        _triangles(image, depth, x, y, behind, corners.astype(np.float32),
                   np.array([[0, 1, 2], [0, 2, 3]]), shade.astype(np.float32),
                   np.zeros(3, np.float32))

    def _annotate(self, image, title):
        from PIL import Image, ImageDraw, ImageFont

        picture = Image.fromarray(image)
        draw = ImageDraw.Draw(picture)
        font = ImageFont.load_default(size=14)
        small = ImageFont.load_default(size=12)
        if title:
            draw.text((12, 8), title, fill=(0, 0, 0), font=font)
        # axis directions, bottom left: x, z and y (up), drawn from the view's rotation
        origin = np.array([60.0, self.height - 60.0])
        for axis, name in ((0, "x"), (2, "z"), (1, "y (up)")):
            direction = self.rotation[:2, axis] * np.array([1.0, -1.0])
            tip = origin + 40.0 * direction
            draw.line([tuple(origin), tuple(tip)], fill=(60, 60, 60), width=2)
            draw.text(tuple(tip + 10.0 * direction - np.array([4.0, 7.0])), name,
                      fill=(0, 0, 0), font=small)
        # the colour bar: height y, with its range
        left, top, bottom = self.width - COLORBAR_WIDTH + 18, 60, self.height - 60
        bar = self.colors[np.linspace(255, 0, bottom - top).astype(int)]
        picture.paste(Image.fromarray(np.repeat(bar[:, None, :], 16, axis=1)), (left, top))
        draw.rectangle([left, top, left + 15, bottom - 1], outline=(0, 0, 0))
        low, high = self.value_range
        for k in range(5):
            value = high - (high - low) * k / 4
            y = top + (bottom - top - 1) * k / 4
            draw.line([(left + 15, y), (left + 19, y)], fill=(0, 0, 0))
            draw.text((left + 22, y - 7), f"{value:.3g}", fill=(0, 0, 0), font=small)
        draw.text((left - 6, top - 22), "height y", fill=(0, 0, 0), font=small)
        return np.asarray(picture)


@numba.njit(cache=True)
def _project(points, center, rotation, scale, cx, cy):
    n = points.shape[0]
    xs, ys, zs = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    for k in range(n):
        px, py, pz = points[k, 0] - center[0], points[k, 1] - center[1], points[k, 2] - center[2]
        xs[k] = cx + (rotation[0, 0] * px + rotation[0, 1] * py + rotation[0, 2] * pz) * scale
        ys[k] = cy - (rotation[1, 0] * px + rotation[1, 1] * py + rotation[1, 2] * pz) * scale
        zs[k] = rotation[2, 0] * px + rotation[2, 1] * py + rotation[2, 2] * pz
    return xs, ys, zs


@numba.njit(cache=True)
def _shades(heights, low, high, colors):
    shades = np.empty((heights.shape[0], 3), np.float32)
    last = colors.shape[0] - 1
    for k in range(heights.shape[0]):
        t = (heights[k] - low) / (high - low) * last
        index = 0 if not t > 0.0 else (last if t > last else int(t))
        for c in range(3):
            shades[k, c] = colors[index, c]
    return shades


def _point_radius(count):
    return float(np.clip(math.sqrt(25000.0 / max(count, 1)), 1.0, 6.0))


@numba.njit(cache=True)
def _discs(image, depth, xs, ys, zs, shades, radius):
    height, width = depth.shape
    r = int(math.ceil(radius))
    for k in range(xs.shape[0]):
        cx, cy, cz = xs[k], ys[k], zs[k]
        if not (math.isfinite(cx) and math.isfinite(cy) and math.isfinite(cz)):
            continue
        px, py = int(cx), int(cy)
        for dy in range(-r, r + 1):
            y = py + dy
            if y < 0 or y >= height:
                continue
            for dx in range(-r, r + 1):
                x = px + dx
                if x < 0 or x >= width or dx * dx + dy * dy > radius * radius:
                    continue
                # a sphere's bulge toward the viewer, and its shading
                bulge = 1.0 - (dx * dx + dy * dy) / (radius * radius + 1.0)
                z = cz + bulge * 1e-3
                if z > depth[y, x]:
                    depth[y, x] = z
                    light = 0.65 + 0.35 * bulge
                    for c in range(3):
                        image[y, x, c] = min(255.0, shades[k, c] * light)


@numba.njit(cache=True)
def _triangles(image, depth, xs, ys, zs, points, triangles, shades, light):
    height, width = depth.shape
    lit = light[0] != 0.0 or light[1] != 0.0 or light[2] != 0.0
    for t in range(triangles.shape[0]):
        a, b, c = triangles[t, 0], triangles[t, 1], triangles[t, 2]
        x0, y0, x1, y1, x2, y2 = xs[a], ys[a], xs[b], ys[b], xs[c], ys[c]
        if not (math.isfinite(x0) and math.isfinite(x1) and math.isfinite(x2)
                and math.isfinite(y0) and math.isfinite(y1) and math.isfinite(y2)):
            continue
        area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
        if area == 0.0:
            continue
        brightness = 1.0
        if lit:  # two-sided flat shading: |cos| of the face normal to the light
            ux, uy, uz = points[b, 0] - points[a, 0], points[b, 1] - points[a, 1], \
                points[b, 2] - points[a, 2]
            vx, vy, vz = points[c, 0] - points[a, 0], points[c, 1] - points[a, 1], \
                points[c, 2] - points[a, 2]
            nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
            norm = math.sqrt(nx * nx + ny * ny + nz * nz)
            if norm > 0.0:
                brightness = 0.45 + 0.55 * abs(nx * light[0] + ny * light[1] + nz * light[2]) / norm
        xmin = max(int(math.floor(min(x0, x1, x2))), 0)
        xmax = min(int(math.ceil(max(x0, x1, x2))), width - 1)
        ymin = max(int(math.floor(min(y0, y1, y2))), 0)
        ymax = min(int(math.ceil(max(y0, y1, y2))), height - 1)
        for y in range(ymin, ymax + 1):
            for x in range(xmin, xmax + 1):
                px, py = x + 0.5, y + 0.5
                w0 = ((x1 - px) * (y2 - py) - (x2 - px) * (y1 - py)) / area
                w1 = ((x2 - px) * (y0 - py) - (x0 - px) * (y2 - py)) / area
                w2 = 1.0 - w0 - w1
                if w0 < 0.0 or w1 < 0.0 or w2 < 0.0:
                    continue
                z = w0 * zs[a] + w1 * zs[b] + w2 * zs[c]
                if z > depth[y, x]:
                    depth[y, x] = z
                    for k in range(3):
                        value = (w0 * shades[a, k] + w1 * shades[b, k] + w2 * shades[c, k])
                        image[y, x, k] = min(255.0, value * brightness)


def save_png(image, path):
    from PIL import Image

    Image.fromarray(image).save(path)


def save_gif(images, path, fps=15):
    """A looping GIF of the RGB frames (one shared palette keeps it small and steady)."""
    from PIL import Image

    frames = [Image.fromarray(image) for image in images]
    palette = frames[len(frames) // 2].quantize(colors=255, method=Image.Quantize.MEDIANCUT)
    frames = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
    frames[0].save(path, save_all=True, append_images=frames[1:], loop=0,
                   duration=max(int(1000 / fps), 20), optimize=False)
