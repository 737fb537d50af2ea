"""The imported MJCF ant on a real GPU: its drop agrees with the CPU run until it lands
(contacts then branch on float differences), its gait keeps it standing, and the viewers
write a CUDA model's states (host copies)."""

import math

import numpy as np
import pytest
from numba import cuda

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="needs a CUDA GPU and driver")
pytest.importorskip("cupy", reason="needs CuPy (pip install 'numba-sim[cuda]')")


def torso_track(device, frames):
    from numba_sim.examples import ant

    example = ant.Example(device=device)
    track = []
    for _ in range(frames):
        example.step()
        track.append(example.torso())
    return example, np.array(track)


def test_ant_drop_matches_the_cpu_and_it_stands(tmp_path):
    _, cpu = torso_track("cpu", 120)
    example, gpu = torso_track("cuda", 120)
    # falling from 0.75 m, legs swinging to their targets: before the feet touch (about
    # frame 12) both runs agree to float32 rounding
    np.testing.assert_allclose(gpu[:8, :3], cpu[:8, :3], atol=2e-3)
    assert np.isfinite(gpu).all()
    x, y, z, w = gpu[-1, 3:]
    assert 1.0 - 2.0 * (x * x + y * y) > math.cos(math.radians(25.0))
    assert gpu[-1, 2] > 0.3

    from numba_sim.physics.viewer import ViewerImages, ViewerUSD

    for viewer in (ViewerUSD(tmp_path / "ant.usda"), ViewerImages(tmp_path / "ant.png")):
        viewer.set_model(example.model)
        viewer.begin_frame(0.0)
        viewer.log_state(example.states[0])
        viewer.end_frame()
        viewer.close()
    assert (tmp_path / "ant.usda").stat().st_size > 1000
    assert (tmp_path / "ant.png").read_bytes()[:4] == b"\x89PNG"
