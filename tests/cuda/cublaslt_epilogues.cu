// cuBLASLt's training epilogues against host loops computed here: the
// forward ones that keep the activation's input (GELU_AUX, GELU_AUX_BIAS:
// the pre-GELU matrix; RELU_AUX, RELU_AUX_BIAS: a bit mask, bit
// i + j * ld set where the ReLU input is positive), the backward ones that
// read it (DGELU, DGELU_BGRAD, DRELU, DRELU_BGRAD: D times the activation's
// derivative; the BGRAD forms also write the sums of D's rows as the bias
// gradient) and BGRADA / BGRADB (the sums of op(A)'s rows / op(B)'s
// columns over k). Also what llm.c's train_gpt2.cu does: bfloat16 forward
// GELU_AUX_BIAS, then DGELU reading the auxiliary matrix that wrote, and a
// BGRADB weight gradient accumulated with beta = 1; a strided batch with
// an auxiliary batch stride; the descriptor attributes read back; the
// heuristic query for each epilogue; and an auxiliary leading dimension
// that is not a multiple of 128 refused for a mask.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
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

static unsigned seed = 4242;
static float next_value()
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(((seed >> 8) % 257) / 128.0 - 1.0); // multiples of 1/128 in [-1, 1]: exact in bf16
}

static double gelu(double x)
{
    const double c = std::sqrt(2 / M_PI);
    return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

// d/dx of the tanh form, by the product and chain rules
static double gelu_grad(double x)
{
    const double c = std::sqrt(2 / M_PI);
    double u = c * (x + 0.044715 * x * x * x), t = std::tanh(u);
    double du = c * (1 + 3 * 0.044715 * x * x);
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du;
}

static bool is_bias_in(cublasLtEpilogue_t e)
{
    return e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
}

// One float matmul with an epilogue, m x n x k, op(A) = A^T when ta, op(B)
// = B^T when tb, D of leading dimension m, and an auxiliary matrix of
// leading dimension aux_ld (elements, or bits for the ReLU mask).
struct problem {
    cublasLtEpilogue_t epi;
    int m, n, k;
    bool ta, tb;
    float alpha, beta;
    int64_t aux_ld;
};

static void *dev_copy(const void *p, size_t bytes)
{
    void *d;
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMemcpy(d, p, bytes, cudaMemcpyHostToDevice));
    return d;
}

static bool heuristic(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t la,
                      cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc, cublasLtMatrixLayout_t ld,
                      cublasLtMatmulHeuristicResult_t *result)
{
    cublasLtMatmulPreference_t pref;
    LT(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = 4 << 20;
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int found = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 1, result, &found));
    LT(cublasLtMatmulPreferenceDestroy(pref));
    return found == 1 && result->workspaceSize <= ws;
}

static void test_float(cublasLtHandle_t lt, const problem &p)
{
    const int m = p.m, n = p.n, k = p.k;
    int arows = p.ta ? k : m, acols = p.ta ? m : k, brows = p.tb ? n : k, bcols = p.tb ? k : n;
    bool mask = p.epi == CUBLASLT_EPILOGUE_RELU_AUX || p.epi == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
                p.epi == CUBLASLT_EPILOGUE_DRELU || p.epi == CUBLASLT_EPILOGUE_DRELU_BGRAD;
    bool gelu_aux = p.epi == CUBLASLT_EPILOGUE_GELU_AUX || p.epi == CUBLASLT_EPILOGUE_GELU_AUX_BIAS ||
                    p.epi == CUBLASLT_EPILOGUE_DGELU || p.epi == CUBLASLT_EPILOGUE_DGELU_BGRAD;
    bool backward = p.epi == CUBLASLT_EPILOGUE_DRELU || p.epi == CUBLASLT_EPILOGUE_DRELU_BGRAD ||
                    p.epi == CUBLASLT_EPILOGUE_DGELU || p.epi == CUBLASLT_EPILOGUE_DGELU_BGRAD;
    bool bgrad_d = p.epi == CUBLASLT_EPILOGUE_DRELU_BGRAD || p.epi == CUBLASLT_EPILOGUE_DGELU_BGRAD;
    int bias_len = p.epi == CUBLASLT_EPILOGUE_BGRADB ? n : m;
    std::vector<float> A(arows * acols), B(brows * bcols), C(m * n), bias(bias_len);
    for (auto &x : A) x = next_value();
    for (auto &x : B) x = next_value();
    for (auto &x : C) x = next_value();
    for (auto &x : bias) x = next_value();
    // the auxiliary matrix: a known pattern everywhere (a forward epilogue
    // overwrites the m x n part only); for the backward ones, the input
    size_t aux_bytes = mask ? (size_t)(p.aux_ld * n + 7) / 8 : (size_t)p.aux_ld * n * 4;
    std::vector<uint8_t> aux(aux_bytes, 0xa5);
    if (gelu_aux)
        for (size_t i = 0; i < aux_bytes / 4; i++) {
            float v = 2.5f * next_value();
            memcpy(&aux[i * 4], &v, 4);
        }
    if (mask)
        for (auto &x : aux) x = (uint8_t)(next_value() * 127 + 128);
    float *dA = (float *)dev_copy(A.data(), A.size() * 4), *dB = (float *)dev_copy(B.data(), B.size() * 4);
    float *dD = (float *)dev_copy(C.data(), C.size() * 4), *dbias = (float *)dev_copy(bias.data(), bias_len * 4);
    void *daux = dev_copy(aux.data(), aux.size());

    cublasLtMatmulDesc_t desc;
    LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t opa = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &p.epi, sizeof p.epi));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
    if (mask || gelu_aux) {
        LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &daux, sizeof daux));
        LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &p.aux_ld, sizeof p.aux_ld));
    }
    cublasLtMatrixLayout_t la, lb, lc;
    LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, arows, acols, arows));
    LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, brows, bcols, brows));
    LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m));
    cublasLtMatmulHeuristicResult_t result;
    bool found = heuristic(lt, desc, la, lb, lc, lc, &result);
    EXPECT(found);
    LT(cublasLtMatmul(lt, desc, &p.alpha, dA, la, dB, lb, &p.beta, dD, lc, dD, lc, found ? &result.algo : nullptr,
                      nullptr, 0, 0));
    std::vector<float> got(m * n), got_bias(bias_len);
    std::vector<uint8_t> got_aux(aux_bytes);
    CHECK(cudaMemcpy(got.data(), dD, got.size() * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(got_bias.data(), dbias, bias_len * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(got_aux.data(), daux, aux_bytes, cudaMemcpyDeviceToHost));

    int bad = 0;
    std::vector<double> rowsum(m, 0.0);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int q = 0; q < k; q++)
                s += (double)(p.ta ? A[q + i * arows] : A[i + q * arows]) *
                     (p.tb ? B[j + q * brows] : B[q + j * brows]);
            double v = p.alpha * s + (p.beta != 0 ? p.beta * C[i + j * m] : 0.0);
            if (is_bias_in(p.epi))
                v += bias[i];
            int64_t at = i + j * p.aux_ld;
            if (p.epi == CUBLASLT_EPILOGUE_GELU_AUX || p.epi == CUBLASLT_EPILOGUE_GELU_AUX_BIAS) {
                float pre;
                memcpy(&pre, &got_aux[at * 4], 4);
                if (!close_to(pre, v, 1e-5, 1e-5))
                    bad++;
                v = gelu(v);
            }
            if (p.epi == CUBLASLT_EPILOGUE_RELU_AUX || p.epi == CUBLASLT_EPILOGUE_RELU_AUX_BIAS) {
                int bit = (got_aux[at / 8] >> (at % 8)) & 1;
                if (std::fabs(v) > 1e-4 && bit != (v > 0))
                    bad++;
                v = v > 0 ? v : 0;
            }
            if (p.epi == CUBLASLT_EPILOGUE_DGELU || p.epi == CUBLASLT_EPILOGUE_DGELU_BGRAD) {
                float pre;
                memcpy(&pre, &aux[at * 4], 4);
                v *= gelu_grad(pre);
            }
            if ((p.epi == CUBLASLT_EPILOGUE_DRELU || p.epi == CUBLASLT_EPILOGUE_DRELU_BGRAD) &&
                !((aux[at / 8] >> (at % 8)) & 1))
                v = 0;
            rowsum[i] += v;
            if (!close_to(got[i + j * m], v, 1e-5, 1e-5))
                bad++;
        }
    // the bias gradients
    if (bgrad_d)
        for (int i = 0; i < m; i++)
            if (!close_to(got_bias[i], rowsum[i], 1e-5, 1e-4))
                bad++;
    if (p.epi == CUBLASLT_EPILOGUE_BGRADA)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int q = 0; q < k; q++)
                s += p.ta ? A[q + i * arows] : A[i + q * arows];
            if (!close_to(got_bias[i], s, 1e-5, 1e-5))
                bad++;
        }
    if (p.epi == CUBLASLT_EPILOGUE_BGRADB)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int q = 0; q < k; q++)
                s += p.tb ? B[j + q * brows] : B[q + j * brows];
            if (!close_to(got_bias[j], s, 1e-5, 1e-5))
                bad++;
        }
    if (!bgrad_d && p.epi != CUBLASLT_EPILOGUE_BGRADA && p.epi != CUBLASLT_EPILOGUE_BGRADB && got_bias != bias)
        bad++; // a bias that is only read stays as it was
    // the auxiliary matrix outside the m x n part is untouched; a backward
    // epilogue does not write it at all
    if (backward && got_aux != aux)
        bad++;
    if (gelu_aux && !backward)
        for (int j = 0; j < n; j++)
            for (int64_t i = m; i < p.aux_ld; i++)
                if (memcmp(&got_aux[(i + j * p.aux_ld) * 4], &aux[(i + j * p.aux_ld) * 4], 4))
                    bad++;
    if (bad)
        printf("FAIL: float matmul with epilogue %d (ta %d tb %d alpha %g beta %g): %d wrong\n", (int)p.epi, p.ta,
               p.tb, p.alpha, p.beta, bad);
    EXPECT(bad == 0);
    LT(cublasLtMatrixLayoutDestroy(la));
    LT(cublasLtMatrixLayoutDestroy(lb));
    LT(cublasLtMatrixLayoutDestroy(lc));
    LT(cublasLtMatmulDescDestroy(desc));
    for (void *q : {(void *)dA, (void *)dB, (void *)dD, (void *)dbias, daux})
        CHECK(cudaFree(q));
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

// llm.c's pattern, in bfloat16 with float compute: the forward MLP matmul
// (weight^T x inp + bias, GELU_AUX_BIAS keeping pre-GELU), then the
// backward matmul into that layer's output gradient with DGELU reading
// it, then a weight gradient with BGRADB, accumulated (beta = 1).
static void test_llmc_bf16(cublasLtHandle_t lt)
{
    const int C = 16, OC = 32, BT = 8; // inp is C x BT, weight C x OC, out OC x BT
    std::vector<float> inp(C * BT), weight(C * OC), bias(OC), dout2(OC * BT), w2(OC * C), dw(C * OC);
    for (auto *v : {&inp, &weight, &bias, &dout2, &w2, &dw})
        for (auto &x : *v) x = next_value();
    auto bf = [](const std::vector<float> &v) {
        std::vector<unsigned short> o(v.size());
        for (size_t i = 0; i < v.size(); i++) o[i] = to_bf16(v[i]);
        return o;
    };
    auto hinp = bf(inp), hweight = bf(weight), hbias = bf(bias), hdout2 = bf(dout2), hw2 = bf(w2), hdw = bf(dw);
    void *dinp = dev_copy(hinp.data(), hinp.size() * 2), *dweight = dev_copy(hweight.data(), hweight.size() * 2);
    void *dbias = dev_copy(hbias.data(), hbias.size() * 2), *ddout2 = dev_copy(hdout2.data(), hdout2.size() * 2);
    void *dw2 = dev_copy(hw2.data(), hw2.size() * 2), *ddw = dev_copy(hdw.data(), hdw.size() * 2);
    void *dout, *dpre, *dgrad, *dbgrad;
    CHECK(cudaMalloc(&dout, OC * BT * 2));
    CHECK(cudaMalloc(&dpre, OC * BT * 2));
    CHECK(cudaMalloc(&dgrad, OC * BT * 2));
    CHECK(cudaMalloc(&dbgrad, OC * 2));

    auto matmul = [&](void *d, const void *a, const void *b, const void *biasp, int m, int n, int k, bool ta,
                      bool tb, bool accumulate, void *pre_gelu, bool backward) {
        cublasLtMatmulDesc_t desc;
        LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        cublasOperation_t opn = CUBLAS_OP_N, opt = CUBLAS_OP_T;
        LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, ta ? &opt : &opn, sizeof opt));
        LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, tb ? &opt : &opn, sizeof opt));
        cublasLtMatrixLayout_t la, lb, lc, ld;
        LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, ta ? k : m, ta ? m : k, ta ? k : m));
        LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, tb ? n : k, tb ? k : n, tb ? n : k));
        LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, m));
        LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));
        cublasLtEpilogue_t epi;
        if (pre_gelu) {
            int64_t gelu_ld = m;
            LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &gelu_ld, sizeof gelu_ld));
            LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &pre_gelu,
                                              sizeof pre_gelu));
            epi = backward ? CUBLASLT_EPILOGUE_DGELU : biasp ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
        } else if (biasp) {
            epi = backward ? CUBLASLT_EPILOGUE_BGRADB : CUBLASLT_EPILOGUE_BIAS;
        } else {
            epi = CUBLASLT_EPILOGUE_DEFAULT;
        }
        LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        if (biasp) {
            cudaDataType_t bt = CUDA_R_16BF;
            LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
            LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasp, sizeof biasp));
        }
        cudaDataType_t st = CUDA_R_32F;
        LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &st, sizeof st));
        cublasLtMatmulHeuristicResult_t result;
        bool found = heuristic(lt, desc, la, lb, lc, ld, &result);
        EXPECT(found);
        float alpha = 1, beta = accumulate ? 1 : 0;
        LT(cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, d, lc, d, ld, found ? &result.algo : nullptr,
                          nullptr, 0, 0));
        for (auto l : {la, lb, lc, ld})
            LT(cublasLtMatrixLayoutDestroy(l));
        LT(cublasLtMatmulDescDestroy(desc));
    };

    // forward: out = gelu(weight^T inp + bias), pre = weight^T inp + bias
    matmul(dout, dweight, dinp, dbias, OC, BT, C, true, false, false, dpre, false);
    // backward: grad = (w2^T-free form) w2 (OC x C) times dout2... here
    // grad (OC x BT) = w2 (OC x C) x inp (C x BT), times gelu'(pre)
    matmul(dgrad, dw2, dinp, nullptr, OC, BT, C, false, false, false, dpre, true);
    // weight gradient: dw (C x OC) += inp (C x BT) x dout2^T (BT x OC), bias gradient over dout2's rows
    matmul(ddw, dinp, ddout2, dbgrad, C, OC, BT, false, true, true, nullptr, true);

    std::vector<unsigned short> hout(OC * BT), hpre(OC * BT), hgrad(OC * BT), hbgrad(OC), hdw_after(C * OC);
    CHECK(cudaMemcpy(hout.data(), dout, hout.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hpre.data(), dpre, hpre.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hgrad.data(), dgrad, hgrad.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hbgrad.data(), dbgrad, hbgrad.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hdw_after.data(), ddw, hdw_after.size() * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    const double rel = 1.0 / 64, tol = 1.0 / 32;
    for (int j = 0; j < BT; j++)
        for (int i = 0; i < OC; i++) {
            double s = bias[i];
            for (int q = 0; q < C; q++)
                s += (double)weight[q + i * C] * inp[q + j * C];
            if (!close_to(from_bf16(hpre[i + j * OC]), s, rel, tol))
                bad++;
            if (!close_to(from_bf16(hout[i + j * OC]), gelu(s), rel, tol))
                bad++;
            double g = 0;
            for (int q = 0; q < C; q++)
                g += (double)w2[i + q * OC] * inp[q + j * C];
            g *= gelu_grad(from_bf16(hpre[i + j * OC])); // the stored pre-GELU is DGELU's input
            if (!close_to(from_bf16(hgrad[i + j * OC]), g, rel, tol))
                bad++;
        }
    for (int j = 0; j < OC; j++) {
        double bs = 0;
        for (int q = 0; q < BT; q++)
            bs += dout2[j + q * OC];
        if (!close_to(from_bf16(hbgrad[j]), bs, rel, tol))
            bad++;
        for (int i = 0; i < C; i++) {
            double s = dw[i + j * C];
            for (int q = 0; q < BT; q++)
                s += (double)inp[i + q * C] * dout2[j + q * OC];
            if (!close_to(from_bf16(hdw_after[i + j * C]), s, rel, tol))
                bad++;
        }
    }
    if (bad)
        printf("FAIL: llm.c-style bf16 forward/backward: %d wrong\n", bad);
    EXPECT(bad == 0);
    for (void *q : {dinp, dweight, dbias, ddout2, dw2, ddw, dout, dpre, dgrad, dbgrad})
        CHECK(cudaFree(q));
}

// GELU_AUX over a strided batch of 3: each entry's pre-GELU matrix lands
// aux_stride elements after the previous one's.
static void test_batched_aux(cublasLtHandle_t lt)
{
    const int m = 8, n = 6, k = 5, batch = 3;
    const int64_t aux_ld = 16, aux_stride = aux_ld * n + 8;
    std::vector<float> A(m * k * batch), B(k * n * batch);
    for (auto &x : A) x = next_value();
    for (auto &x : B) x = next_value();
    float *dA = (float *)dev_copy(A.data(), A.size() * 4), *dB = (float *)dev_copy(B.data(), B.size() * 4);
    float *dD, *daux;
    CHECK(cudaMalloc(&dD, m * n * batch * 4));
    CHECK(cudaMalloc(&daux, aux_stride * batch * 4));
    CHECK(cudaMemset(daux, 0, aux_stride * batch * 4));
    cublasLtMatmulDesc_t desc;
    LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_AUX;
    cudaDataType_t aux_type = CUDA_R_32F;
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &daux, sizeof daux));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &aux_stride,
                                      sizeof aux_stride));
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type, sizeof aux_type));
    // the attributes read back
    int64_t v64 = 0;
    void *vp = nullptr;
    int32_t v32 = 0;
    size_t written = 0;
    LT(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &v64, sizeof v64, &written));
    EXPECT(v64 == aux_ld && written == 8);
    LT(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &v64, sizeof v64,
                                      &written));
    EXPECT(v64 == aux_stride);
    LT(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &vp, sizeof vp, &written));
    EXPECT(vp == daux && written == sizeof vp);
    LT(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &v32, sizeof v32,
                                      &written));
    EXPECT(v32 == CUDA_R_32F && written == 4);
    cublasLtMatrixLayout_t la, lb, lc;
    LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
    LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
    LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m));
    int nb = batch;
    int64_t strides[3] = {m * k, k * n, m * n};
    cublasLtMatrixLayout_t all[3] = {la, lb, lc};
    for (int i = 0; i < 3; i++) {
        LT(cublasLtMatrixLayoutSetAttribute(all[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nb, sizeof nb));
        LT(cublasLtMatrixLayoutSetAttribute(all[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                            sizeof strides[i]));
    }
    float alpha = 1, beta = 0;
    LT(cublasLtMatmul(lt, desc, &alpha, dA, la, dB, lb, &beta, dD, lc, dD, lc, nullptr, nullptr, 0, 0));
    std::vector<float> D(m * n * batch), aux(aux_stride * batch);
    CHECK(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(aux.data(), daux, aux.size() * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < aux_ld; i++) {
                float a = aux[b * aux_stride + j * aux_ld + i];
                if (i >= m) { // padding rows: untouched
                    if (a != 0)
                        bad++;
                    continue;
                }
                double s = 0;
                for (int q = 0; q < k; q++)
                    s += (double)A[b * m * k + i + q * m] * B[b * k * n + q + j * k];
                if (!close_to(a, s, 1e-5, 1e-5) || !close_to(D[b * m * n + i + j * m], gelu(s), 1e-5, 1e-5))
                    bad++;
            }
    if (bad)
        printf("FAIL: batched GELU_AUX: %d wrong\n", bad);
    EXPECT(bad == 0);

    // a ReLU mask needs a leading dimension that is a multiple of 128 bits
    epi = CUBLASLT_EPILOGUE_RELU_AUX;
    LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    EXPECT(cublasLtMatmul(lt, desc, &alpha, dA, la, dB, lb, &beta, dD, lc, dD, lc, nullptr, nullptr, 0, 0) !=
           CUBLAS_STATUS_SUCCESS);
    for (int i = 0; i < 3; i++)
        LT(cublasLtMatrixLayoutDestroy(all[i]));
    LT(cublasLtMatmulDescDestroy(desc));
    for (void *q : {(void *)dA, (void *)dB, (void *)dD, (void *)daux})
        CHECK(cudaFree(q));
}

int main()
{
    cublasLtHandle_t lt;
    LT(cublasLtCreate(&lt));
    // forward epilogues keeping the activation input; the GELU matrix with
    // padding rows (ld 32 > m 24), the mask with ld 128 > m
    test_float(lt, {CUBLASLT_EPILOGUE_GELU_AUX, 24, 10, 33, true, false, 1.0f, 0.0f, 32});
    test_float(lt, {CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 24, 10, 33, false, false, 0.5f, 1.0f, 24});
    test_float(lt, {CUBLASLT_EPILOGUE_RELU_AUX, 40, 9, 17, false, true, 1.0f, 0.0f, 128});
    test_float(lt, {CUBLASLT_EPILOGUE_RELU_AUX_BIAS, 24, 10, 33, true, false, 1.0f, -0.5f, 256});
    // backward epilogues reading it
    test_float(lt, {CUBLASLT_EPILOGUE_DGELU, 24, 10, 33, false, false, 1.0f, 0.0f, 32});
    test_float(lt, {CUBLASLT_EPILOGUE_DGELU_BGRAD, 16, 12, 20, true, true, 0.75f, 0.0f, 16});
    test_float(lt, {CUBLASLT_EPILOGUE_DRELU, 24, 10, 33, false, false, 1.0f, 0.0f, 128});
    test_float(lt, {CUBLASLT_EPILOGUE_DRELU_BGRAD, 40, 7, 9, false, true, 1.0f, 0.25f, 128});
    // bias gradients of the inputs
    test_float(lt, {CUBLASLT_EPILOGUE_BGRADA, 24, 10, 33, false, false, 1.0f, 0.0f, 0});
    test_float(lt, {CUBLASLT_EPILOGUE_BGRADA, 24, 10, 33, true, false, 1.0f, 1.0f, 0});
    test_float(lt, {CUBLASLT_EPILOGUE_BGRADB, 24, 10, 33, false, true, 1.0f, 1.0f, 0});
    test_float(lt, {CUBLASLT_EPILOGUE_BGRADB, 24, 10, 33, false, false, 0.5f, 0.0f, 0});
    test_llmc_bf16(lt);
    test_batched_aux(lt);
    LT(cublasLtDestroy(lt));
    return finish("cublaslt_epilogues");
}
