"""The importers as ``ModelBuilder`` methods (mixed into it): ``add_urdf`` and
``add_mjcf`` (import_urdf.py, import_mjcf.py).

An import reads the whole file into a builder of its own and adds that with
``add_builder`` only when it has been read: a file that fails half way leaves the builder
as it was."""


class ImportBuilder:
    def add_urdf(self, source, xform=None, floating=False, cfg=None, up_axis="z",
                 parse_visuals=False):
        """Add the URDF robot *source* (a path or the XML text); see ``import_urdf``."""
        from numba_sim.physics.import_urdf import add_urdf

        return self._import(add_urdf, source, xform=xform, floating=floating, cfg=cfg,
                            up_axis=up_axis, parse_visuals=parse_visuals)

    def add_mjcf(self, source, xform=None, floating=None, cfg=None, up_axis="z",
                 density=1000.0, collapse_fixed_joints=True, ignore_names=()):
        """Add the MuJoCo model *source* (a path or the XML text); see ``import_mjcf``."""
        from numba_sim.physics.import_mjcf import add_mjcf

        return self._import(add_mjcf, source, xform=xform, floating=floating, cfg=cfg,
                            up_axis=up_axis, density=density,
                            collapse_fixed_joints=collapse_fixed_joints,
                            ignore_names=ignore_names)

    def _import(self, reader, source, **options):
        scratch = type(self)(up_axis="xyz"[self.up_axis], gravity=0.0)
        for name, value in vars(self).items():  # the caller's defaults (joint limit ke, ...)
            if name.startswith("default_"):
                setattr(scratch, name, value)
        result = reader(scratch, source, **options)
        offsets = (self.body_count, self.joint_count, len(self.shape_type), self.joint_dof_count)
        self.add_builder(scratch)
        return result.shifted(*offsets)
