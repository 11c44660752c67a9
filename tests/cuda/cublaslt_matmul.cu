// cuBLASLt matmuls against a host triple loop computed here: float with
// the bias, ReLU-bias, GELU and GELU-bias epilogues (GELU's tanh form),
// C and D distinct and the same, a transposed A (as llm.c's forward
// matmul), a strided batch, and bfloat16 A/B/C/D with a bfloat16 bias and
// float compute (llm.c's types); the heuristic query returns an algorithm.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "check.h"

#define LT(call)                                                                                     \
    do {                                                                                             \
        cublasStatus_t lt_status_ = (call);                                                          \
        if (lt_status_ != CUBLAS_STATUS_SUCCESS) {                                                   \
            printf("FAIL: %s:%d: %s returned %s\n", __FILE__, __LINE__, #call,                       \
                   cublasLtGetStatusName(lt_status_));                                                \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

static unsigned seed = 777;
static float next_value()
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(((seed >> 8) % 257) / 128.0 - 1.0); // multiples of 1/128 in [-1, 1]: exact in bf16
}

static double gelu(double x)
{
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

struct layouts {
    cublasLtMatrixLayout_t a, b, c, d;
};

// D = epilogue(alpha op(A) B + beta C + bias), m x n, batch entries apart by stride
static void host_matmul(bool ta, int m, int n, int k, float alpha, const std::vector<float> &A, int lda,
                        const std::vector<float> &B, int ldb, float beta, const std::vector<float> &C, int ldc,
                        const std::vector<float> &bias, cublasLtEpilogue_t epi, std::vector<double> &D)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (double)(ta ? A[p + i * lda] : A[i + p * lda]) * B[p + j * ldb];
            double v = alpha * s + (beta != 0 ? beta * C[i + j * ldc] : 0.0);
            if (epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS || epi == CUBLASLT_EPILOGUE_GELU_BIAS)
                v += bias[i];
            if (epi == CUBLASLT_EPILOGUE_RELU_BIAS || epi == CUBLASLT_EPILOGUE_RELU)
                v = v > 0 ? v : 0;
            if (epi == CUBLASLT_EPILOGUE_GELU || epi == CUBLASLT_EPILOGUE_GELU_BIAS)
                v = gelu(v);
            D[i + j * m] = v;
        }
}

static void test_float(cublasLtHandle_t lt, cublasLtEpilogue_t epi, bool ta, bool in_place, float beta)
{
    const int m = 24, n = 10, k = 33;
    int arows = ta ? k : m, acols = ta ? m : k;
    std::vector<float> A(arows * acols), B(k * n), C(m * n), bias(m);
    for (auto &x : A) x = next_value();
    for (auto &x : B) x = next_value();
    for (auto &x : C) x = next_value();
    for (auto &x : bias) x = next_value();
    float *dA, *dB, *dC, *dD, *dbias;
    CHECK(cudaMalloc(&dA, A.size() * 4));
    CHECK(cudaMalloc(&dB, B.size() * 4));
    CHECK(cudaMalloc(&dC, C.size() * 4));
    CHECK(cudaMalloc(&dD, C.size() * 4));
    CHECK(cudaMalloc(&dbias, m * 4));
    CHECK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dbias, bias.data(), m * 4, cudaMemcpyHostToDevice));
    cublasLtMatmulDesc_t desc;
    LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
    cublasLtEpilogue_t back;
    size_t written = 0;
    LT(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &back, sizeof back, &written));
    EXPECT(back == epi && written == sizeof back);
    layouts l;
    LT(cublasLtMatrixLayoutCreate(&l.a, CUDA_R_32F, arows, acols, arows));
    LT(cublasLtMatrixLayoutCreate(&l.b, CUDA_R_32F, k, n, k));
    LT(cublasLtMatrixLayoutCreate(&l.c, CUDA_R_32F, m, n, m));
    LT(cublasLtMatrixLayoutCreate(&l.d, CUDA_R_32F, m, n, m));
    cublasLtMatmulPreference_t pref;
    LT(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = 1 << 20;
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(lt, desc, l.a, l.b, l.c, l.d, pref, 1, &result, &found));
    EXPECT(found == 1);
    void *workspace;
    CHECK(cudaMalloc(&workspace, ws));
    float alpha = 0.75f;
    float *out = in_place ? dC : dD;
    LT(cublasLtMatmul(lt, desc, &alpha, dA, l.a, dB, l.b, &beta, dC, l.c, out, l.d, found ? &result.algo : nullptr,
                      workspace, ws, 0));
    std::vector<float> got(m * n);
    CHECK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<double> want(m * n);
    host_matmul(ta, m, n, k, alpha, A, arows, B, k, beta, C, m, bias, epi, want);
    int bad = 0;
    for (int i = 0; i < m * n; i++)
        if (!close_to(got[i], want[i], 1e-5, 1e-5))
            bad++;
    if (!in_place) { // C is left as it was
        std::vector<float> c_after(m * n);
        CHECK(cudaMemcpy(c_after.data(), dC, c_after.size() * 4, cudaMemcpyDeviceToHost));
        if (c_after != C)
            bad++;
    }
    if (bad)
        printf("FAIL: float matmul epilogue %d ta=%d in_place=%d: %d wrong\n", (int)epi, ta, in_place, bad);
    EXPECT(bad == 0);
    LT(cublasLtMatmulPreferenceDestroy(pref));
    LT(cublasLtMatrixLayoutDestroy(l.a));
    LT(cublasLtMatrixLayoutDestroy(l.b));
    LT(cublasLtMatrixLayoutDestroy(l.c));
    LT(cublasLtMatrixLayoutDestroy(l.d));
    LT(cublasLtMatmulDescDestroy(desc));
    for (void *p : {(void *)dA, (void *)dB, (void *)dC, (void *)dD, (void *)dbias, workspace})
        CHECK(cudaFree(p));
}

static unsigned short to_bf16(float f)
{
    __nv_bfloat16 v = __float2bfloat16(f);
    unsigned short u;
    memcpy(&u, &v, 2);
    return u;
}

static float from_bf16(unsigned short u)
{
    __nv_bfloat16 v;
    memcpy(&v, &u, 2);
    return __bfloat162float(v);
}

// bfloat16 A (transposed), B, D and bias, float compute, a strided batch
// of 2, GELU with bias: what llm.c's matmul_forward asks for.
static void test_bf16_batched(cublasLtHandle_t lt)
{
    const int m = 16, n = 8, k = 32, batch = 2;
    const long long sa = k * m, sb = k * n, sd = m * n;
    std::vector<float> A(sa * batch), B(sb * batch), bias(m);
    for (auto &x : A) x = next_value();
    for (auto &x : B) x = next_value();
    for (auto &x : bias) x = next_value();
    std::vector<unsigned short> hA(A.size()), hB(B.size()), hbias(m), hD(sd * batch);
    for (size_t i = 0; i < A.size(); i++) hA[i] = to_bf16(A[i]);
    for (size_t i = 0; i < B.size(); i++) hB[i] = to_bf16(B[i]);
    for (int i = 0; i < m; i++) hbias[i] = to_bf16(bias[i]);
    void *dA, *dB, *dD, *dbias;
    CHECK(cudaMalloc(&dA, hA.size() * 2));
    CHECK(cudaMalloc(&dB, hB.size() * 2));
    CHECK(cudaMalloc(&dD, hD.size() * 2));
    CHECK(cudaMalloc(&dbias, m * 2));
    CHECK(cudaMemcpy(dA, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dbias, hbias.data(), m * 2, cudaMemcpyHostToDevice));
    cublasLtMatmulDesc_t desc;
    LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t opt = CUBLAS_OP_T;
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof opt));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
    layouts l;
    LT(cublasLtMatrixLayoutCreate(&l.a, CUDA_R_16BF, k, m, k));
    LT(cublasLtMatrixLayoutCreate(&l.b, CUDA_R_16BF, k, n, k));
    LT(cublasLtMatrixLayoutCreate(&l.c, CUDA_R_16BF, m, n, m));
    LT(cublasLtMatrixLayoutCreate(&l.d, CUDA_R_16BF, m, n, m));
    int nb = batch;
    cublasLtMatrixLayout_t all[4] = {l.a, l.b, l.c, l.d};
    long long strides[4] = {sa, sb, sd, sd};
    for (int i = 0; i < 4; i++) {
        LT(cublasLtMatrixLayoutSetAttribute(all[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nb, sizeof nb));
        LT(cublasLtMatrixLayoutSetAttribute(all[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                            sizeof strides[i]));
    }
    float alpha = 1, beta = 0;
    LT(cublasLtMatmul(lt, desc, &alpha, dA, l.a, dB, l.b, &beta, dD, l.c, dD, l.d, nullptr, nullptr, 0, 0));
    CHECK(cudaMemcpy(hD.data(), dD, hD.size() * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    std::vector<float> nothing(m * n, 0.0f);
    for (int b = 0; b < batch; b++) {
        std::vector<float> a(A.begin() + b * sa, A.begin() + (b + 1) * sa), bb(B.begin() + b * sb, B.begin() + (b + 1) * sb);
        std::vector<double> want(m * n);
        host_matmul(true, m, n, k, alpha, a, k, bb, k, 0, nothing, m, bias, epi, want);
        for (int i = 0; i < m * n; i++)
            if (!close_to(from_bf16(hD[b * sd + i]), want[i], 1.0 / 128, 1.0 / 64))
                bad++;
    }
    if (bad)
        printf("FAIL: bf16 batched matmul: %d wrong\n", bad);
    EXPECT(bad == 0);
    for (int i = 0; i < 4; i++)
        LT(cublasLtMatrixLayoutDestroy(all[i]));
    LT(cublasLtMatmulDescDestroy(desc));
    for (void *p : {dA, dB, dD, dbias})
        CHECK(cudaFree(p));
}

int main()
{
    cublasLtHandle_t lt;
    LT(cublasLtCreate(&lt));
    EXPECT(cublasLtGetVersion() >= 120000);
    test_float(lt, CUBLASLT_EPILOGUE_DEFAULT, false, false, 0.5f);
    test_float(lt, CUBLASLT_EPILOGUE_BIAS, true, false, 0.0f);
    test_float(lt, CUBLASLT_EPILOGUE_RELU_BIAS, false, true, 1.0f);
    test_float(lt, CUBLASLT_EPILOGUE_GELU, true, false, 0.0f);
    test_float(lt, CUBLASLT_EPILOGUE_GELU_BIAS, true, true, 0.0f);
    test_float(lt, CUBLASLT_EPILOGUE_RELU, false, false, -1.0f);
    test_bf16_batched(lt);
    LT(cublasLtDestroy(lt));
    return finish("cublaslt_matmul");
}
