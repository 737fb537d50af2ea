// Host only (never compiled by NVRTC): makes the host library an importable
// extension module, numba_sim._native, so that packaging tools build,
// install and locate it like any other extension. Its only job is to exist;
// numba_sim/native.py loads the file's symbols into LLVM's JIT.
#include <Python.h>

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "numba_sim._native",
    "Host build of cuda_src/ (C ABI entry points used by numba_sim's CPU target).",
    -1,
    nullptr,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&native_module); }
