// cuBLAS and cuBLASLt error cases. Without arguments: statuses that a GPU
// gives too (a NULL handle, negative sizes, a leading dimension below the
// row count, status names). With an argument, cases whose message is
// kemu's own (tests/cuda/run.sh checks the message; the program checks the
// status): "unsupported" (an entry point kemu does not implement),
// "row" (a row-major cuBLASLt layout), "badptr" (an operand outside every
// allocation), "capture" (a call on a capturing stream), "uninit" (a GEMM
// whose B was never written: initcheck names the call and the argument),
// "threads N" (under kemu, OpenBLAS runs N threads after a first call).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <dlfcn.h>
#include <cstring>

#include "check.h"

#define EXPECT_STATUS(call, want)                                                                    \
    do {                                                                                             \
        cublasStatus_t got_ = (call);                                                                \
        if (got_ != (want)) {                                                                        \
            printf("FAIL: %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,          \
                   cublasGetStatusName(got_), cublasGetStatusName(want));                            \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cublasHandle_t h;
    EXPECT_STATUS(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    float *dA, *dC;
    CHECK(cudaMalloc(&dA, 64 * 64 * 4));
    CHECK(cudaMalloc(&dC, 64 * 64 * 4));
    CHECK(cudaMemset(dA, 0, 64 * 64 * 4));
    float one = 1, zero = 0;
    if (!strcmp(mode, "unsupported")) {
        EXPECT_STATUS(cublasStpsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 4, dA, dC, 1),
                      CUBLAS_STATUS_NOT_SUPPORTED);
    } else if (!strcmp(mode, "row")) {
        cublasLtMatrixLayout_t l;
        EXPECT_STATUS(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 4, 4, 4), CUBLAS_STATUS_SUCCESS);
        cublasLtOrder_t order = CUBLASLT_ORDER_ROW;
        EXPECT_STATUS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order),
                      CUBLAS_STATUS_NOT_SUPPORTED);
        cublasLtMatrixLayoutDestroy(l);
    } else if (!strcmp(mode, "badptr")) {
        float *host = (float *)malloc(16 * 16 * 4); // not device memory
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, dA, 16, dA, 16, &zero, host, 16),
                      CUBLAS_STATUS_EXECUTION_FAILED);
        free(host);
    } else if (!strcmp(mode, "uninit")) {
        float *fresh;
        CHECK(cudaMalloc(&fresh, 16 * 16 * 4)); // never written
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, dA, 16, fresh, 16, &zero, dC, 16),
                      CUBLAS_STATUS_SUCCESS);
        CHECK(cudaFree(fresh));
    } else if (!strcmp(mode, "threads") && argc > 2) {
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, dA, 4, dA, 4, &zero, dC, 4),
                      CUBLAS_STATUS_SUCCESS);
        // kemu's libcublas computes through OpenBLAS (absent from a GPU run)
        int (*get_threads)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
        if (get_threads)
            EXPECT(get_threads() == atoi(argv[2]));
    } else if (!strcmp(mode, "capture")) {
        cudaStream_t s;
        CHECK(cudaStreamCreate(&s));
        EXPECT_STATUS(cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, dA, 8, dA, 8, &zero, dC, 8),
                      CUBLAS_STATUS_NOT_SUPPORTED);
        cudaGraph_t g = nullptr;
        EXPECT_ERROR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
        CHECK(cudaStreamDestroy(s));
    } else {
        EXPECT_STATUS(cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, dA, 4, dA, 4, &zero, dC, 4),
                      CUBLAS_STATUS_NOT_INITIALIZED);
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, dA, 4, dA, 4, &zero, dC, 4),
                      CUBLAS_STATUS_INVALID_VALUE);
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 4, 4, &one, dA, 4, dA, 4, &zero, dC, 8),
                      CUBLAS_STATUS_INVALID_VALUE); // lda 4 < m 8
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 4, 4, &one, dA, 8, dA, 4, &zero, dC, 4),
                      CUBLAS_STATUS_INVALID_VALUE); // ldc 4 < m 8
        EXPECT(!strcmp(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED"));
        EXPECT(!strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE"));
        EXPECT(cublasGetStatusString(CUBLAS_STATUS_SUCCESS) != nullptr);
        EXPECT_STATUS(cublasSetPointerMode(nullptr, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_NOT_INITIALIZED);
        // m = 0 is nothing to do
        EXPECT_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 4, 4, &one, dA, 1, dA, 4, &zero, dC, 1),
                      CUBLAS_STATUS_SUCCESS);
    }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dC));
    EXPECT_STATUS(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    return finish("cublas_errors");
}
