/* cuLink* over two PTX modules (argv[1]: link_a.ptx, whose kernel calls an
 * .extern function; argv[2]: link_b.ptx, which defines it; both from
 * `nvcc -ptx -rdc=true`): one added from a file, one from memory, linked,
 * the result loaded with cuModuleLoadDataEx and launched. A link missing
 * link_b fails. Self-checking: prints PASS drv_link. */
#include "check.h"

#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: drv_link link_a.ptx link_b.ptx\n");
        return 2;
    }
    char *b_text = slurp(argv[2]);
    if (!b_text) {
        printf("FAIL: cannot read %s\n", argv[2]);
        return 1;
    }
    CK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuCtxCreate(&ctx, NULL, 0, dev));

    char info[1024], error[1024];
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {info, (void *)(size_t)sizeof info, error, (void *)(size_t)sizeof error};
    CUlinkState link;
    CK(cuLinkCreate(4, opts, vals, &link));
    CK(cuLinkAddFile(link, CU_JIT_INPUT_PTX, argv[1], 0, NULL, NULL));
    CK(cuLinkAddData(link, CU_JIT_INPUT_PTX, b_text, strlen(b_text) + 1, "link_b.ptx", 0, NULL, NULL));
    void *image = NULL;
    size_t size = 0;
    CK(cuLinkComplete(link, &image, &size));
    EXPECT(image != NULL && size > 0);
    CUmodule mod;
    CK(cuModuleLoadDataEx(&mod, image, 0, NULL, NULL));
    CK(cuLinkDestroy(link));
    CUfunction apply;
    CK(cuModuleGetFunction(&apply, mod, "apply"));
    enum { N = 300 };
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i * 0.5f;
    CUdeviceptr dx;
    CK(cuMemAlloc(&dx, sizeof x));
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    int n = N;
    void *params[] = {&dx, &n};
    CK(cuLaunchKernel(apply, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    CK(cuMemcpyDtoH(x, dx, sizeof x));
    for (int i = 0; i < N; i++)
        EXPECT(x[i] == 2.0f * ((float)i * 0.5f) + 1.0f);

    /* link_a alone: twice() is undefined, and loading the result fails */
    CUlinkState alone;
    CK(cuLinkCreate(0, NULL, NULL, &alone));
    CK(cuLinkAddFile(alone, CU_JIT_INPUT_PTX, argv[1], 0, NULL, NULL));
    CUresult r = cuLinkComplete(alone, &image, &size);
    if (r == CUDA_SUCCESS) {
        CUmodule broken;
        r = cuModuleLoadData(&broken, image);
    }
    EXPECT(r != CUDA_SUCCESS);
    CK(cuLinkDestroy(alone));

    CK(cuMemFree(dx));
    CK(cuModuleUnload(mod));
    CK(cuCtxDestroy(ctx));
    free(b_text);
    return finish("drv_link");
}
