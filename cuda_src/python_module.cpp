// Host only (never compiled by NVRTC): makes the host library an importable
// extension module, numba_sim._native, so that packaging tools build,
// install and locate it like any other extension; numba_sim/native.py loads
// the file's symbols into LLVM's JIT.
//
// It also holds the one piece of the CUDA launch path that Python is too slow
// for: launch(function, blocks, threads, stream, params) calls the driver's
// cuLaunchKernel (looked up in the already loaded driver library at the first
// call, so the library never links against CUDA) with a prepared parameter
// array (numba_sim/cuda_launch.py). It returns the CUresult as an int.
#include <Python.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace {

typedef int (*LaunchKernel)(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                            unsigned block_x, unsigned block_y, unsigned block_z,
                            unsigned shared_bytes, void* stream, void** params, void** extra);

LaunchKernel launch_kernel = nullptr;

bool find_launch_kernel() {
#ifdef _WIN32
    HMODULE library = GetModuleHandleA("nvcuda.dll");
    if (library == nullptr) library = LoadLibraryA("nvcuda.dll");
    if (library != nullptr)
        launch_kernel = reinterpret_cast<LaunchKernel>(GetProcAddress(library, "cuLaunchKernel"));
#else
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) library = dlopen("libcuda.so.1", RTLD_NOW);
    if (library != nullptr)
        launch_kernel = reinterpret_cast<LaunchKernel>(dlsym(library, "cuLaunchKernel"));
#endif
    return launch_kernel != nullptr;
}

PyObject* launch(PyObject*, PyObject* const* args, Py_ssize_t count) {
    if (count != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "launch(function, blocks, threads, stream, params) takes 5 ints");
        return nullptr;
    }
    void* function = PyLong_AsVoidPtr(args[0]);
    unsigned long blocks = PyLong_AsUnsignedLong(args[1]);
    unsigned long threads = PyLong_AsUnsignedLong(args[2]);
    void* stream = PyLong_AsVoidPtr(args[3]);
    void* params = PyLong_AsVoidPtr(args[4]);
    if (PyErr_Occurred()) return nullptr;
    if (launch_kernel == nullptr && !find_launch_kernel()) {
        PyErr_SetString(PyExc_RuntimeError, "numba_sim: cuLaunchKernel not found in the CUDA driver");
        return nullptr;
    }
    int result;
    Py_BEGIN_ALLOW_THREADS  // the driver may wait for room in the launch queue
    result = launch_kernel(function, (unsigned)blocks, 1, 1, (unsigned)threads, 1, 1, 0, stream,
                           static_cast<void**>(params), nullptr);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(result);
}

PyMethodDef methods[] = {
    {"launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(launch)),
     METH_FASTCALL, "cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, stream, params, NULL)"},
    {nullptr, nullptr, 0, nullptr},
};

struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "numba_sim._native",
    "Host build of cuda_src/ (C ABI entry points used by numba_sim's CPU target) and the "
    "driver call of prepared CUDA launches.",
    -1,
    methods,
};

}  // namespace

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&native_module); }
