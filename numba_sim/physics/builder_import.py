"""The importers as ``ModelBuilder`` methods (mixed into it): ``add_urdf`` and
``add_mjcf`` (import_urdf.py, import_mjcf.py)."""


class ImportBuilder:
    def add_urdf(self, source, xform=None, floating=False, cfg=None, up_axis="z",
                 parse_visuals=False):
        """Add the URDF robot *source* (a path or the XML text); see ``import_urdf``."""
        from numba_sim.physics.import_urdf import add_urdf

        return add_urdf(self, source, xform=xform, floating=floating, cfg=cfg,
                        up_axis=up_axis, parse_visuals=parse_visuals)

    def add_mjcf(self, source, xform=None, floating=None, cfg=None, up_axis="z",
                 density=1000.0, collapse_fixed_joints=True):
        """Add the MuJoCo model *source* (a path or the XML text); see ``import_mjcf``."""
        from numba_sim.physics.import_mjcf import add_mjcf

        return add_mjcf(self, source, xform=xform, floating=floating, cfg=cfg,
                        up_axis=up_axis, density=density,
                        collapse_fixed_joints=collapse_fixed_joints)
