"""The fast picture (numba_sim/raster.py): what is drawn where, colours by height, depth order."""

import numpy as np
import pytest

pytest.importorskip("PIL")

from numba_sim import raster  # noqa: E402


@pytest.fixture(scope="module")
def view():
    return raster.View(np.array([[-1.0, 0.0, -1.0], [1.0, 2.0, 1.0]]), width=400, height=300)


def pixel(view, image, point):
    x, y, _ = view.project(np.array([point], np.float32))
    return image[int(y[0]), int(x[0])]


def test_particles_are_coloured_by_height_over_the_ground(view):
    points = np.array([[0.0, 0.1, 0.0], [0.0, 1.9, 0.0]], np.float32)
    image = view.frame(points, point_radius=3)
    assert image.shape == (300, 400, 3) and image.dtype == np.uint8
    low, high = pixel(view, image, points[0]), pixel(view, image, points[1])
    assert tuple(low) != tuple(raster.GROUND) and tuple(high) != (255, 255, 255)
    assert high[0] > low[0] and high[1] > low[1]  # viridis: purple at the bottom, yellow on top
    ground = pixel(view, image, [0.9, 0.0, 0.9])
    assert tuple(ground) == tuple(raster.GROUND.astype(np.uint8))


def test_the_nearer_of_two_overlapping_particles_is_drawn(view):
    toward_camera = view.rotation[2]  # the camera looks along -back
    near = np.array([0.0, 1.0, 0.0]) + 0.5 * toward_camera
    far = np.array([0.0, 1.0, 0.0]) - 0.5 * toward_camera
    colours = []
    for order in ([near, far], [far, near]):
        image = view.frame(np.array(order, np.float32), point_radius=4)
        colours.append(tuple(pixel(view, image, near)))
    assert colours[0] == colours[1]  # the same particle wins whichever is drawn first
    assert np.allclose(view.project(np.array([near, far], np.float32))[0], view.project(
        np.array([near, far], np.float32))[0][0], atol=1e-3)  # they do overlap on screen


def test_triangles_cover_their_inside_only(view):
    points = np.array([[-0.5, 1.0, 0.0], [0.5, 1.0, 0.0], [0.0, 1.8, 0.0]], np.float32)
    image = view.frame(points, np.array([[0, 1, 2]]))
    inside = pixel(view, image, points.mean(axis=0))
    outside = pixel(view, image, [0.0, 1.95, 0.0])
    assert tuple(inside) != (255, 255, 255) and tuple(outside) == (255, 255, 255)


def test_non_finite_particles_are_skipped_and_an_empty_frame_draws(view):
    image = view.frame(np.array([[np.nan, 0.0, 0.0], [0.0, np.inf, 0.0]], np.float32))
    assert image.shape == (300, 400, 3)
    assert view.frame(np.zeros((0, 3), np.float32)).shape == (300, 400, 3)


def test_gif_keeps_each_frame(tmp_path, view):
    from PIL import Image, ImageChops

    frames = [view.frame(np.array([[x, 1.0, 0.0]], np.float32), point_radius=5)
              for x in (-0.6, 0.0, 0.6)]
    path = tmp_path / "moving.gif"
    raster.save_gif(frames, path)
    with Image.open(path) as gif:
        assert gif.n_frames == 3
        decoded = []
        for k in range(3):
            gif.seek(k)
            decoded.append(gif.convert("RGB"))
    assert all(ImageChops.difference(a, b).getbbox() for a, b in zip(decoded, decoded[1:]))
