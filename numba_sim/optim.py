"""Warp's gradient-descent optimisers (``warp.optim``): :class:`SGD` and :class:`Adam`.

``import numba_sim.optim`` (as Warp's ``import warp.optim``).  Each optimiser updates a list
of NumPy (or CuPy) arrays in place, one kernel launch per array and step, from gradients
such as ``sim.grad(x)`` after ``tape.backward``::

    opt = numba_sim.optim.Adam([x], lr=0.02)
    for _ in range(100):
        tape.reset()
        with tape:
            sim.launch(loss_kernel, n, inputs=[x, loss])
        tape.backward(loss=loss)
        opt.step([sim.grad(x)])

Warp's signatures, defaults, state (``opt.b``; ``opt.m``, ``opt.v``; ``opt.t``) and
messages.  The update kernels run over the arrays' scalars, so an array of any float
value type (``vec3``, ``mat33``, ``vec4d``...: trailing storage dims) is updated
componentwise, which is what Warp's ``vec3`` Adam kernel does; Warp's optimisers take
float32 and vec3 (Adam) or whatever its generic SGD kernel types, these take float32 and
float64 storage (no float16 in numba_sim).  The hyperparameters are cast to the arrays'
scalar type, so a float32 update is float32 arithmetic, as Warp's.
"""

from typing import Any

import numpy as np

import numba_sim as sim
from numba_sim.arrays import c_contiguous, device_of

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@sim.kernel(enable_backward=False)
def sgd_step_kernel(g: sim.array(dtype=Any), b: sim.array(dtype=Any), lr: Any, momentum: Any,
                    dampening: Any, weight_decay: Any, nesterov: int, t: int,
                    params: sim.array(dtype=Any)):
    """One SGD step on one scalar of *params* (Warp's rule, PyTorch's ``torch.optim.SGD``)."""
    i = sim.tid()
    gt = g[i]
    if weight_decay != 0.0:
        gt += weight_decay * params[i]
    if momentum != 0.0:
        bt = b[i]
        if t > 0:
            bt = momentum * bt + (1.0 - dampening) * gt
        else:
            bt = gt  # the first step starts the buffer at the gradient (no dampening)
        if nesterov == 1:
            gt += momentum * bt
        else:
            gt = bt
        b[i] = bt
    params[i] = params[i] - lr * gt


@sim.kernel(enable_backward=False)
def adam_step_kernel(g: sim.array(dtype=Any), m: sim.array(dtype=Any), v: sim.array(dtype=Any),
                     lr: Any, beta1: Any, beta2: Any, t: Any, eps: Any,
                     params: sim.array(dtype=Any)):
    """One Adam step on one scalar of *params*: the moments' running averages, their bias
    corrections at step ``t + 1``, then the update (Kingma and Ba; Warp's order of
    operations)."""
    i = sim.tid()
    gi = g[i]
    mi = beta1 * m[i] + (1.0 - beta1) * gi
    vi = beta2 * v[i] + (1.0 - beta2) * gi * gi
    m[i] = mi
    v[i] = vi
    mhat = mi / (1.0 - sim.pow(beta1, t + 1.0))
    vhat = vi / (1.0 - sim.pow(beta2, t + 1.0))
    params[i] = params[i] - lr * mhat / (sim.sqrt(vhat) + eps)


# --------------------------------------------------------------------------
# host side: arrays, devices, checks


def _device_key(a):
    """("cpu", None) or ("cuda", ordinal) of an array."""
    if device_of(a) == "cuda":
        return "cuda", int(getattr(getattr(a, "device", None), "id", 0))
    return "cpu", None


def _device_name(key):
    return "cpu" if key[0] == "cpu" else f"cuda:{key[1]}"


def _moved(buffer, like):
    """*buffer*'s contents on *like*'s device (Warp's ``buffer.to(param.device)``)."""
    return sim.from_numpy(sim.to_numpy(buffer), device=_device_name(_device_key(like)))


def _check_param(optimizer, index, param):
    if device_of(param) is None:
        raise TypeError(f"{optimizer}: params[{index}]: expected a NumPy or CuPy array, got "
                        f"{type(param).__name__} {param!r:.60}")
    if np.dtype(param.dtype) not in _FLOAT_DTYPES:
        raise RuntimeError(f"{optimizer}: params[{index}]: unsupported dtype {param.dtype} "
                           f"(expected float32 or float64 storage: float, vec3, vec3d, ...)")
    if not c_contiguous(param):
        raise ValueError(f"{optimizer}: params[{index}]: expected a C-contiguous array (it is "
                         f"updated in place through a flat view), got strides "
                         f"{getattr(param, 'strides', None)}")


def _state_buffer(buffer, param):
    """*buffer* kept for *param* (Warp's rule): a new zero buffer unless shape and dtype
    match, moved when only the device differs."""
    if buffer is None or buffer.shape != param.shape or buffer.dtype != param.dtype:
        return sim.zeros_like(param, requires_grad=False)
    if _device_key(buffer) != _device_key(param):
        return _moved(buffer, param)
    return buffer


def _check_gradient(optimizer, param, gradient):
    dtype = getattr(gradient, "dtype", None)
    if dtype != param.dtype:
        raise TypeError(f"{optimizer} gradient dtype must match parameter dtype {param.dtype}, "
                        f"got {dtype}")
    shape = tuple(getattr(gradient, "shape", ()))
    if tuple(param.shape) != shape:
        raise ValueError(f"{optimizer} gradient shape must match parameter shape "
                         f"{tuple(param.shape)}, got {shape}")


def _flat(a):
    return a.reshape(-1)


def _scalar(param, value):
    return np.dtype(param.dtype).type(value)


class SGD:
    """Warp's ``wp.optim.SGD``: stochastic gradient descent with optional momentum
    (``dampening``, ``nesterov``) and weight decay (L2), as ``torch.optim.SGD``.

    ``params``: a list of float arrays (or None, then :meth:`set_params`); ``opt.b`` holds
    one momentum buffer per array, ``opt.t`` counts the steps.
    """

    def __init__(self, params=None, lr=0.001, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        self.b = []  # momentum buffers
        self.set_params(params)
        self.lr = lr
        self.momentum = momentum
        self.dampening = dampening
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.t = 0

    def set_params(self, params):
        """The arrays to optimise; each keeps its momentum buffer where shape and dtype
        match (moved to the array's device if that changed), else gets a zero one."""
        self.params = params
        if isinstance(params, list) and len(params) > 0:
            if len(self.b) != len(params):
                self.b = [None] * len(params)
            for i, param in enumerate(params):
                _check_param("SGD", i, param)
                self.b[i] = _state_buffer(self.b[i], param)

    def reset_internal_state(self):
        """Zero the momentum buffers and the step count."""
        for buffer in self.b:
            buffer[...] = 0
        self.t = 0

    def step(self, grad):
        """One step: ``params[i]`` moves against ``grad[i]`` (a list, one gradient per
        array, of its shape and dtype)."""
        if self.params is None:
            raise RuntimeError("SGD parameters must be set before calling step(), got None")
        _check_gradient_list("SGD", self.params, grad)
        for i in range(len(self.params)):
            SGD.step_detail(grad[i], self.b[i], self.lr, self.momentum, self.dampening,
                            self.weight_decay, self.nesterov, self.t, self.params[i])
        self.t = self.t + 1

    @staticmethod
    def step_detail(g, b, lr, momentum, dampening, weight_decay, nesterov, t, params):
        """One SGD update of one array *params* from its gradient *g* and momentum buffer
        *b* at step *t*."""
        _check_gradient("SGD", params, g)
        if getattr(b, "dtype", None) != params.dtype:
            raise TypeError(f"SGD momentum buffer dtype must match parameter dtype "
                            f"{params.dtype}, got {getattr(b, 'dtype', None)}")
        if tuple(getattr(b, "shape", ())) != tuple(params.shape):
            raise ValueError(f"SGD momentum buffer shape must match parameter shape "
                             f"{tuple(params.shape)}, got {tuple(getattr(b, 'shape', ()))}")
        s = lambda value: _scalar(params, value)  # noqa: E731
        sim.launch(sgd_step_kernel, params.size,
                   inputs=[_flat(g), _flat(b), s(lr), s(momentum), s(dampening), s(weight_decay),
                           int(bool(nesterov)), int(t), _flat(params)])


class Adam:
    """Warp's ``wp.optim.Adam`` (adaptive moment estimation, as ``torch.optim.Adam``).

    ``params``: a list of float arrays (or None, then :meth:`set_params`); ``opt.m`` and
    ``opt.v`` hold the first and second moments of each, ``opt.t`` counts the steps.
    """

    def __init__(self, params=None, lr=0.001, betas=(0.9, 0.999), eps=1e-08):
        self.m = []  # first moments
        self.v = []  # second moments
        self.set_params(params)
        self.lr = lr
        self.beta1 = betas[0]
        self.beta2 = betas[1]
        self.eps = eps
        self.t = 0

    def set_params(self, params):
        """The arrays to optimise; each keeps its moments where shape and dtype match
        (moved to the array's device if that changed), else gets zero ones."""
        self.params = params
        if isinstance(params, list) and len(params) > 0:
            if len(self.m) != len(params):
                self.m = [None] * len(params)
            if len(self.v) != len(params):
                self.v = [None] * len(params)
            for i, param in enumerate(params):
                _check_param("Adam", i, param)
                self.m[i] = _state_buffer(self.m[i], param)
                self.v[i] = _state_buffer(self.v[i], param)

    def reset_internal_state(self):
        """Zero the moments and the step count."""
        for buffer in self.m + self.v:
            buffer[...] = 0
        self.t = 0

    def step(self, grad):
        """One step: ``params[i]`` moves against ``grad[i]`` (a list, one gradient per
        array, of its shape and dtype)."""
        if self.params is None:
            raise RuntimeError("Adam parameters must be set before calling step(), got None")
        _check_gradient_list("Adam", self.params, grad)
        for i in range(len(self.params)):
            Adam.step_detail(grad[i], self.m[i], self.v[i], self.lr, self.beta1, self.beta2,
                             self.t, self.eps, self.params[i])
        self.t = self.t + 1

    @staticmethod
    def step_detail(g, m, v, lr, beta1, beta2, t, eps, params):
        """One Adam update of one array *params* from its gradient *g* and moments *m*,
        *v* at step *t*."""
        _check_gradient("Adam", params, g)
        for name, buffer in (("first", m), ("second", v)):
            if getattr(buffer, "dtype", None) != params.dtype or \
                    tuple(getattr(buffer, "shape", ())) != tuple(params.shape):
                raise ValueError(f"Adam {name} moment buffer must have the parameter's dtype "
                                 f"{params.dtype} and shape {tuple(params.shape)}, got "
                                 f"{getattr(buffer, 'dtype', None)} "
                                 f"{tuple(getattr(buffer, 'shape', ()))}")
        s = lambda value: _scalar(params, value)  # noqa: E731
        sim.launch(adam_step_kernel, params.size,
                   inputs=[_flat(g), _flat(m), _flat(v), s(lr), s(beta1), s(beta2), s(t), s(eps),
                           _flat(params)])


def _check_gradient_list(optimizer, params, grad):
    if not isinstance(grad, (list, tuple)) or len(grad) < len(params):
        raise ValueError(f"{optimizer}.step: grad: expected a list of {len(params)} gradient "
                         f"arrays (one per parameter array), got {grad!r:.80}")
