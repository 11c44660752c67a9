// A kernel that never ends (nobody sets the flag), for Ctrl-C under
// kemu debug (tests/debug/run.sh).
extern "C" __global__ void spin(volatile int *flag, int *count)
{
    int n = 0;
    while (*flag == 0)
        n++;
    count[threadIdx.x] = n;
}
