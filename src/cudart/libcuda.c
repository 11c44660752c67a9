/* lib/kemu/libcuda.so.1: kemu's CUDA driver library as programs load it
 * (linked with -lcuda, or dlopen("libcuda.so.1") as Numba and cuda-python
 * do). It holds no code: its dependency on kemu's libcudart (DT_NEEDED
 * libcudart.so.13, or .so.12 for the copy in lib/kemu/cuda12/, found
 * through its RUNPATH $ORIGIN) brings the cu* functions, which libcudart
 * implements (src/cudart/driver*.c) on the runtime's own state, so that a
 * program using both APIs sees one device (docs/driver.md). */
__attribute__((used, visibility("default"))) const char kemu_libcuda_version[] = "kemu libcuda.so.1 (driver API 13.0)";
