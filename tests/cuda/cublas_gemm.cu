// cuBLAS level-3 products against a plain host triple loop computed here:
// sgemm and dgemm in all four transpose combinations on non-square shapes
// with leading dimensions above the row counts, alpha/beta (beta = 0 over a
// NaN-filled C must not read C), device pointer mode, TF32 math mode,
// strided-batched and pointer-array batched forms, GemmEx with half and
// bfloat16, the level-1/2 routines and cublasSet/GetMatrix. At the end a
// kernel reads a GEMM result, which initcheck must find initialized (the
// program runs under --tool initcheck too).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "check.h"

#define BLAS(call)                                                                                   \
    do {                                                                                             \
        cublasStatus_t blas_status_ = (call);                                                        \
        if (blas_status_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            printf("FAIL: %s:%d: %s returned %s\n", __FILE__, __LINE__, #call,                       \
                   cublasGetStatusName(blas_status_));                                               \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

static unsigned seed = 12345;
static double next_value()
{
    seed = seed * 1664525u + 1013904223u;
    return ((seed >> 8) % 2001) / 1000.0 - 1.0; // [-1, 1] in steps of 1/1000
}

// C = alpha op(A) op(B) + beta C, column-major, in double
template <typename T>
static void host_gemm(bool ta, bool tb, int m, int n, int k, double alpha, const std::vector<T> &A, int lda,
                      const std::vector<T> &B, int ldb, double beta, std::vector<double> &C, const std::vector<T> &C0,
                      int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double sum = 0;
            for (int p = 0; p < k; p++) {
                double a = ta ? (double)A[p + i * lda] : (double)A[i + p * lda];
                double b = tb ? (double)B[j + p * ldb] : (double)B[p + j * ldb];
                sum += a * b;
            }
            C[i + j * ldc] = alpha * sum + (beta == 0 ? 0.0 : beta * (double)C0[i + j * ldc]);
        }
}

template <typename T> struct gemm_of;
template <> struct gemm_of<float> {
    static constexpr auto fn = cublasSgemm;
    static constexpr double tol = 1e-5;
};
template <> struct gemm_of<double> {
    static constexpr auto fn = cublasDgemm;
    static constexpr double tol = 1e-12;
};

template <typename T> static void test_gemm(cublasHandle_t h, bool ta, bool tb, double alpha, double beta, bool device_scalars)
{
    const int m = 37, n = 23, k = 19;
    int arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
    int lda = arows + 3, ldb = brows + 5, ldc = m + 2;
    std::vector<T> A(lda * acols), B(ldb * bcols), C0(ldc * n);
    for (auto &x : A) x = (T)next_value();
    for (auto &x : B) x = (T)next_value();
    for (auto &x : C0) x = beta == 0 ? (T)NAN : (T)next_value();
    std::vector<double> want(ldc * n);
    host_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, want, C0, ldc);
    T *dA, *dB, *dC, *dScal;
    CHECK(cudaMalloc(&dA, A.size() * sizeof(T)));
    CHECK(cudaMalloc(&dB, B.size() * sizeof(T)));
    CHECK(cudaMalloc(&dC, C0.size() * sizeof(T)));
    CHECK(cudaMalloc(&dScal, 2 * sizeof(T)));
    CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, C0.data(), C0.size() * sizeof(T), cudaMemcpyHostToDevice));
    T scal[2] = {(T)alpha, (T)beta};
    CHECK(cudaMemcpy(dScal, scal, sizeof scal, cudaMemcpyHostToDevice));
    if (device_scalars) {
        BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
        BLAS(gemm_of<T>::fn(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, dScal, dA, lda,
                            dB, ldb, dScal + 1, dC, ldc));
        BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    } else {
        BLAS(gemm_of<T>::fn(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &scal[0], dA,
                            lda, dB, ldb, &scal[1], dC, ldc));
    }
    std::vector<T> got(C0.size());
    CHECK(cudaMemcpy(got.data(), dC, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++)
            if (!close_to(got[i + j * ldc], want[i + j * ldc], gemm_of<T>::tol, gemm_of<T>::tol * k))
                bad++;
        for (int i = m; i < ldc; i++) // the rows between m and ldc are not touched
            if (memcmp(&got[i + j * ldc], &C0[i + j * ldc], sizeof(T)))
                bad++;
    }
    if (bad)
        printf("FAIL: %s gemm ta=%d tb=%d alpha=%g beta=%g device=%d: %d wrong elements\n",
               sizeof(T) == 4 ? "S" : "D", ta, tb, alpha, beta, device_scalars, bad);
    EXPECT(bad == 0);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dScal));
}

// TF32: 64 products of (1 + 2^-20) * 1 sum to 64 exactly once the inputs
// are rounded to TF32, and to 64 (1 + 2^-20) in full FP32.
static void test_tf32(cublasHandle_t h)
{
    const int n = 64;
    std::vector<float> A(n * n, 1.0f + 0x1p-20f), B(n * n, 1.0f);
    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, n * n * 4));
    CHECK(cudaMalloc(&dB, n * n * 4));
    CHECK(cudaMalloc(&dC, n * n * 4));
    CHECK(cudaMemcpy(dA, A.data(), n * n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B.data(), n * n * 4, cudaMemcpyHostToDevice));
    float one = 1, zero = 0, c;
    BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n));
    CHECK(cudaMemcpy(&c, dC, 4, cudaMemcpyDeviceToHost));
    EXPECT(c > 64.00001f); // above 64: the inputs kept their low bits
    BLAS(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    cublasMath_t mode;
    BLAS(cublasGetMathMode(h, &mode));
    EXPECT(mode == CUBLAS_TF32_TENSOR_OP_MATH);
    BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n));
    CHECK(cudaMemcpy(&c, dC, 4, cudaMemcpyDeviceToHost));
    EXPECT(c == 64.0f);
    BLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
}

// Strided batched (Sgemm and GemmStridedBatchedEx, and their 64-bit-size
// forms) and pointer-array batched.
static void test_batched(cublasHandle_t h)
{
    const int m = 9, n = 7, k = 5, batch = 3;
    const long long sa = m * k + 4, sb = k * n + 2, sc = m * n + 1;
    std::vector<float> A(sa * batch), B(sb * batch), C(sc * batch, NAN);
    for (auto &x : A) x = (float)next_value();
    for (auto &x : B) x = (float)next_value();
    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, A.size() * 4));
    CHECK(cudaMalloc(&dB, B.size() * 4));
    CHECK(cudaMalloc(&dC, C.size() * 4));
    CHECK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    float alpha = 0.5f, beta = 0;
    for (int form = 0; form < 5; form++) {
        CHECK(cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice));
        if (form == 0) {
            BLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, sa, dB, k, sb, &beta,
                                           dC, m, sc, batch));
        } else if (form == 1) {
            BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_32F, m, sa, dB,
                                            CUDA_R_32F, k, sb, &beta, dC, CUDA_R_32F, m, sc, batch,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        } else if (form == 3) {
            BLAS(cublasSgemmStridedBatched_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, sa, dB, k, sb,
                                              &beta, dC, m, sc, batch));
        } else if (form == 4) {
            BLAS(cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_32F, m, sa, dB,
                                               CUDA_R_32F, k, sb, &beta, dC, CUDA_R_32F, m, sc, batch,
                                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        } else {
            float *ptrs[3 * batch];
            for (int b = 0; b < batch; b++) {
                ptrs[b] = dA + b * sa;
                ptrs[batch + b] = dB + b * sb;
                ptrs[2 * batch + b] = dC + b * sc;
            }
            float **dptrs;
            CHECK(cudaMalloc(&dptrs, sizeof ptrs));
            CHECK(cudaMemcpy(dptrs, ptrs, sizeof ptrs, cudaMemcpyHostToDevice));
            BLAS(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dptrs, m, dptrs + batch, k, &beta,
                                    dptrs + 2 * batch, m, batch));
            CHECK(cudaFree(dptrs));
        }
        std::vector<float> got(C.size());
        CHECK(cudaMemcpy(got.data(), dC, got.size() * 4, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int b = 0; b < batch; b++) {
            std::vector<float> a(A.begin() + b * sa, A.begin() + b * sa + m * k);
            std::vector<float> bb(B.begin() + b * sb, B.begin() + b * sb + k * n);
            std::vector<float> c0(m * n, 0.0f);
            std::vector<double> want(m * n);
            host_gemm(false, false, m, n, k, alpha, a, m, bb, k, 0.0, want, c0, m);
            for (int i = 0; i < m * n; i++)
                if (!close_to(got[b * sc + i], want[i], 1e-5, 1e-5))
                    bad++;
            if (b + 1 < batch && !std::isnan(got[b * sc + m * n])) // the gap between batch entries
                bad++;
        }
        if (bad)
            printf("FAIL: batched form %d: %d wrong elements\n", form, bad);
        EXPECT(bad == 0);
    }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
}

// GemmEx with half and bfloat16 inputs and outputs, float accumulation:
// the inputs are exact in both formats (multiples of 1/8 in [-2, 2]), so the
// reference is the float result rounded once to the output type.
static void test_gemm_ex(cublasHandle_t h, bool bf16)
{
    const int m = 16, n = 12, k = 24;
    std::vector<float> A(m * k), B(k * n);
    for (auto &x : A) x = (float)((int)(next_value() * 16)) / 8;
    for (auto &x : B) x = (float)((int)(next_value() * 16)) / 8;
    std::vector<unsigned short> hA(m * k), hB(k * n), hC(m * n);
    for (int i = 0; i < m * k; i++) {
        if (bf16) { __nv_bfloat16 v = __float2bfloat16(A[i]); memcpy(&hA[i], &v, 2); }
        else { __half v = __float2half(A[i]); memcpy(&hA[i], &v, 2); }
    }
    for (int i = 0; i < k * n; i++) {
        if (bf16) { __nv_bfloat16 v = __float2bfloat16(B[i]); memcpy(&hB[i], &v, 2); }
        else { __half v = __float2half(B[i]); memcpy(&hB[i], &v, 2); }
    }
    void *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, hA.size() * 2));
    CHECK(cudaMalloc(&dB, hB.size() * 2));
    CHECK(cudaMalloc(&dC, hC.size() * 2));
    CHECK(cudaMemcpy(dA, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
    float alpha = 1.0f / 3, beta = 0;
    cudaDataType t = bf16 ? CUDA_R_16BF : CUDA_R_16F;
    BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, t, m, dB, t, k, &beta, dC, t, m,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK(cudaMemcpy(hC.data(), dC, hC.size() * 2, cudaMemcpyDeviceToHost));
    std::vector<float> c0(m * n, 0.0f);
    std::vector<double> want(m * n);
    host_gemm(false, false, m, n, k, alpha, A, m, B, k, 0.0, want, c0, m);
    int bad = 0;
    for (int i = 0; i < m * n; i++) {
        float got;
        if (bf16) { __nv_bfloat16 v; memcpy(&v, &hC[i], 2); got = __bfloat162float(v); }
        else { __half v; memcpy(&v, &hC[i], 2); got = __half2float(v); }
        // one rounding to the output type: half a unit in its last place
        if (!close_to(got, want[i], bf16 ? 1.0 / 256 : 1.0 / 2048, 1e-3))
            bad++;
    }
    if (bad)
        printf("FAIL: GemmEx %s: %d wrong elements\n", bf16 ? "bf16" : "half", bad);
    EXPECT(bad == 0);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
}

// Level 1 and 2, and cublasSet/GetMatrix, GetVector.
static void test_level12(cublasHandle_t h)
{
    const int n = 50;
    std::vector<double> x(2 * n), y(n);
    for (auto &v : x) v = next_value();
    for (auto &v : y) v = next_value();
    double *dx, *dy, *dres;
    CHECK(cudaMalloc(&dx, x.size() * 8));
    CHECK(cudaMalloc(&dy, y.size() * 8));
    CHECK(cudaMalloc(&dres, 8));
    BLAS(cublasSetVector(n * 2, 8, x.data(), 1, dx, 1));
    BLAS(cublasSetVector(n, 8, y.data(), 1, dy, 1));
    double dot = 0, nrm = 0, asum = 0, amax = -1;
    int imax = 0;
    for (int i = 0; i < n; i++) {
        double xi = x[2 * i]; // x with increment 2
        dot += xi * y[i];
        nrm += xi * xi;
        asum += std::fabs(xi);
        if (std::fabs(xi) > amax) { amax = std::fabs(xi); imax = i + 1; }
    }
    double r;
    BLAS(cublasDdot(h, n, dx, 2, dy, 1, &r));
    EXPECT(close_to(r, dot, 1e-12, 1e-12));
    BLAS(cublasDnrm2(h, n, dx, 2, &r));
    EXPECT(close_to(r, std::sqrt(nrm), 1e-12));
    BLAS(cublasDasum(h, n, dx, 2, &r));
    EXPECT(close_to(r, asum, 1e-12));
    int ir;
    BLAS(cublasIdamax(h, n, dx, 2, &ir));
    EXPECT(ir == imax);
    // device pointer mode: the result lands in device memory
    BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    BLAS(cublasDdot(h, n, dx, 2, dy, 1, dres));
    BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    CHECK(cudaMemcpy(&r, dres, 8, cudaMemcpyDeviceToHost));
    EXPECT(close_to(r, dot, 1e-12, 1e-12));
    // y = 2.5 x + y; then y *= -2; then copy
    double a = 2.5, s = -2;
    BLAS(cublasDaxpy(h, n, &a, dx, 2, dy, 1));
    BLAS(cublasDscal(h, n, &s, dy, 1));
    std::vector<double> got(n);
    BLAS(cublasGetVector(n, 8, dy, 1, got.data(), 1));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (!close_to(got[i], -2 * (2.5 * x[2 * i] + y[i]), 1e-12, 1e-12))
            bad++;
    EXPECT(bad == 0);
    BLAS(cublasDcopy(h, n, dx, 2, dy, 1));
    BLAS(cublasGetVector(n, 8, dy, 1, got.data(), 1));
    for (int i = 0; i < n; i++)
        EXPECT(got[i] == x[2 * i]);
    // float: saxpy, sdot, snrm2, sscal, sasum, isamax, scopy on one vector
    std::vector<float> fx(n), fy(n);
    for (int i = 0; i < n; i++) { fx[i] = (float)x[i]; fy[i] = (float)y[i]; }
    float *fdx, *fdy;
    CHECK(cudaMalloc(&fdx, n * 4));
    CHECK(cudaMalloc(&fdy, n * 4));
    BLAS(cublasSetVector(n, 4, fx.data(), 1, fdx, 1));
    BLAS(cublasSetVector(n, 4, fy.data(), 1, fdy, 1));
    float fr, fa = 3;
    double fdot = 0, fsum = 0, fn2 = 0;
    int fimax = 0;
    float fmax = -1;
    for (int i = 0; i < n; i++) {
        fdot += (double)fx[i] * fy[i];
        fsum += std::fabs(fx[i]);
        fn2 += (double)fx[i] * fx[i];
        if (std::fabs(fx[i]) > fmax) { fmax = std::fabs(fx[i]); fimax = i + 1; }
    }
    BLAS(cublasSdot(h, n, fdx, 1, fdy, 1, &fr));
    EXPECT(close_to(fr, fdot, 1e-5, 1e-5));
    BLAS(cublasSnrm2(h, n, fdx, 1, &fr));
    EXPECT(close_to(fr, std::sqrt(fn2), 1e-5));
    BLAS(cublasSasum(h, n, fdx, 1, &fr));
    EXPECT(close_to(fr, fsum, 1e-5));
    BLAS(cublasIsamax(h, n, fdx, 1, &ir));
    EXPECT(ir == fimax);
    BLAS(cublasSaxpy(h, n, &fa, fdx, 1, fdy, 1));
    BLAS(cublasSscal(h, n, &fa, fdy, 1));
    BLAS(cublasScopy(h, n, fdy, 1, fdx, 1));
    std::vector<float> fgot(n);
    BLAS(cublasGetVector(n, 4, fdx, 1, fgot.data(), 1));
    for (int i = 0; i < n; i++)
        EXPECT(close_to(fgot[i], 3.0 * (3.0 * fx[i] + fy[i]), 1e-5, 1e-5));
    // gemv, both ways, on a matrix placed with SetMatrix (ld 11 > 9 rows)
    const int m = 9, cols = 6, ld = 11;
    std::vector<float> M(m * cols), v(m), w(m, NAN);
    for (auto &e : M) e = (float)next_value();
    for (auto &e : v) e = (float)next_value();
    float *dM, *dv, *dw;
    CHECK(cudaMalloc(&dM, ld * cols * 4));
    CHECK(cudaMalloc(&dv, m * 4));
    CHECK(cudaMalloc(&dw, m * 4));
    BLAS(cublasSetMatrix(m, cols, 4, M.data(), m, dM, ld));
    std::vector<float> back(m * cols);
    BLAS(cublasGetMatrix(m, cols, 4, dM, ld, back.data(), m));
    EXPECT(back == M);
    BLAS(cublasSetVector(m, 4, v.data(), 1, dv, 1));
    BLAS(cublasSetVector(m, 4, w.data(), 1, dw, 1));
    float one = 1, zero = 0;
    BLAS(cublasSgemv(h, CUBLAS_OP_T, m, cols, &one, dM, ld, dv, 1, &zero, dw, 1)); // w = M^T v (beta 0: NaN unread)
    std::vector<float> wgot(cols);
    BLAS(cublasGetVector(cols, 4, dw, 1, wgot.data(), 1));
    for (int j = 0; j < cols; j++) {
        double want = 0;
        for (int i = 0; i < m; i++) want += (double)M[i + j * m] * v[i];
        EXPECT(close_to(wgot[j], want, 1e-5, 1e-5));
    }
    BLAS(cublasSgemv(h, CUBLAS_OP_N, m, cols, &one, dM, ld, dw, 1, &one, dv, 1)); // v += M w
    std::vector<float> vgot(m);
    BLAS(cublasGetVector(m, 4, dv, 1, vgot.data(), 1));
    for (int i = 0; i < m; i++) {
        double want = v[i];
        for (int j = 0; j < cols; j++) want += (double)M[i + j * m] * wgot[j];
        EXPECT(close_to(vgot[i], want, 1e-5, 1e-5));
    }
    for (void *p : {(void *)dx, (void *)dy, (void *)dres, (void *)fdx, (void *)fdy, (void *)dM, (void *)dv, (void *)dw})
        CHECK(cudaFree(p));
}

__global__ void sum_kernel(const float *c, int n, float *out)
{
    float s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += c[i];
    atomicAdd(out, s);
}

// A kernel reads what a GEMM wrote into fresh memory: initcheck must take
// the GEMM's output as written (the program also runs under --tool initcheck).
static void test_kernel_reads_gemm(cublasHandle_t h, cudaStream_t stream)
{
    const int n = 32;
    std::vector<float> A(n * n), B(n * n);
    double want = 0;
    for (auto &x : A) x = (float)next_value();
    for (auto &x : B) x = (float)next_value();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int p = 0; p < n; p++)
                want += (double)A[i + p * n] * B[p + j * n];
    float *dA, *dB, *dC, *dSum;
    CHECK(cudaMalloc(&dA, n * n * 4));
    CHECK(cudaMalloc(&dB, n * n * 4));
    CHECK(cudaMalloc(&dC, n * n * 4)); // never written by the host
    CHECK(cudaMalloc(&dSum, 4));
    CHECK(cudaMemcpy(dA, A.data(), n * n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B.data(), n * n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemsetAsync(dSum, 0, 4, stream));
    BLAS(cublasSetStream(h, stream));
    cudaStream_t got_stream;
    BLAS(cublasGetStream(h, &got_stream));
    EXPECT(got_stream == stream);
    float one = 1, zero = 0;
    BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n));
    sum_kernel<<<1, 128, 0, stream>>>(dC, n * n, dSum);
    CHECK(cudaGetLastError());
    float sum;
    CHECK(cudaMemcpyAsync(&sum, dSum, 4, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    EXPECT(close_to(sum, want, 1e-4, 1e-3));
    BLAS(cublasSetStream(h, 0));
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dSum));
}

int main()
{
    cublasHandle_t h;
    BLAS(cublasCreate(&h));
    int version = 0;
    BLAS(cublasGetVersion(h, &version));
    EXPECT(version >= 120000);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            test_gemm<float>(h, ta, tb, 1.0, 0.0, false);
            test_gemm<double>(h, ta, tb, 1.0, 0.0, false);
            test_gemm<float>(h, ta, tb, -0.75, 0.5, false);
            test_gemm<double>(h, ta, tb, 1.5, -2.0, false);
        }
    test_gemm<float>(h, true, false, 2.0, 0.25, true);
    test_gemm<double>(h, false, true, 0.5, 0.0, true);
    test_tf32(h);
    test_batched(h);
    test_gemm_ex(h, false);
    test_gemm_ex(h, true);
    test_level12(h);
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    test_kernel_reads_gemm(h, stream);
    CHECK(cudaStreamDestroy(stream));
    BLAS(cublasDestroy(h));
    return finish("cublas_gemm");
}
