// cuBLAS routines beyond the gemm family, against host loops computed here
// in std::complex<double> (real types are complex numbers with a zero
// imaginary part there): trsm (every side, fill, transpose and diagonal
// mode, checked by multiplying the solution back), trmm out of place and in
// place, symm / hemm, syrk / herk (only the named triangle of C may
// change), syr2k / her2k, trsmBatched, trsv, trmv, symv / hemv, syr /
// her, syr2 / her2, geam, dgmm, gemv batched and strided-batched, ger / geru / gerc, the complex
// gemm (conjugate transposes, strided and pointer-array batches) and
// gemv, the complex level-1 routines (axpy, dotu, dotc, nrm2, asum, scal,
// Csscal, iamax, copy, swap), and the `_64` forms (64-bit sizes, an
// int64_t iamax result, Set/GetMatrix, Set/GetVector, SgemmEx). The part
// of a triangular or symmetric matrix a routine must not read holds NaN.
// With the argument "big", a `_64` call with a size above 2^31-1, which kemu
// refuses (tests/cuda/run.sh checks the message).
#include <cublas_v2.h>
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <cstdint>
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

typedef std::complex<double> cd;

static unsigned seed = 999;
static double next_value()
{
    seed = seed * 1664525u + 1013904223u;
    return ((seed >> 8) % 2001) / 1000.0 - 1.0; // [-1, 1] in steps of 1/1000
}

// Element types: their host form, to and from std::complex<double>.
template <typename T> struct elem;
template <> struct elem<float> {
    static const bool complex = false;
    static float from(cd v) { return (float)v.real(); }
    static cd to(float v) { return cd(v, 0); }
    static double tol() { return 2e-4; }
};
template <> struct elem<double> {
    static const bool complex = false;
    static double from(cd v) { return v.real(); }
    static cd to(double v) { return cd(v, 0); }
    static double tol() { return 1e-10; }
};
template <> struct elem<cuComplex> {
    static const bool complex = true;
    static cuComplex from(cd v) { return make_cuComplex((float)v.real(), (float)v.imag()); }
    static cd to(cuComplex v) { return cd(cuCrealf(v), cuCimagf(v)); }
    static double tol() { return 2e-4; }
};
template <> struct elem<cuDoubleComplex> {
    static const bool complex = true;
    static cuDoubleComplex from(cd v) { return make_cuDoubleComplex(v.real(), v.imag()); }
    static cd to(cuDoubleComplex v) { return cd(cuCreal(v), cuCimag(v)); }
    static double tol() { return 1e-10; }
};

// A matrix (or vector) of random values, kept in both forms.
template <typename T> struct mat {
    int rows, cols, ld;
    std::vector<cd> h;
    T *d = nullptr;
    mat(int r, int c, int l) : rows(r), cols(c), ld(l), h((size_t)l * c)
    {
        for (auto &x : h) // exactly representable in T
            x = elem<T>::to(elem<T>::from(elem<T>::complex ? cd(next_value(), next_value()) : cd(next_value(), 0)));
        CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
        upload();
    }
    ~mat() { cudaFree(d); }
    cd &at(int i, int j) { return h[i + (size_t)j * ld]; }
    void upload()
    {
        std::vector<T> t(h.size());
        for (size_t i = 0; i < h.size(); i++) t[i] = elem<T>::from(h[i]);
        CHECK(cudaMemcpy(d, t.data(), t.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    std::vector<cd> download() const
    {
        std::vector<T> t(h.size());
        CHECK(cudaMemcpy(t.data(), d, t.size() * sizeof(T), cudaMemcpyDeviceToHost));
        std::vector<cd> o(h.size());
        for (size_t i = 0; i < h.size(); i++) o[i] = elem<T>::to(t[i]);
        return o;
    }
};

static bool near(cd got, cd want, double tol)
{
    return std::abs(got - want) <= tol * (1 + std::abs(want));
}

static cd op_at(const std::vector<cd> &A, int ld, int op, int i, int j) // op(A)[i, j]
{
    if (op == CUBLAS_OP_N) return A[i + (size_t)j * ld];
    cd v = A[j + (size_t)i * ld];
    return op == CUBLAS_OP_C ? std::conj(v) : v;
}

static int report(const char *what, int bad)
{
    if (bad)
        printf("FAIL: %s: %d wrong\n", what, bad);
    EXPECT(bad == 0);
    return bad;
}

// A triangular matrix of order n whose other triangle (and, for a unit
// diagonal, the diagonal) holds NaN, dominant on the diagonal.
template <typename T> static void make_triangular(mat<T> &A, int n, bool lower, bool unit)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            bool in = lower ? i > j : i < j;
            if (i == j)
                A.at(i, j) = unit ? cd(NAN, NAN) : cd(4 + A.at(i, j).real(), elem<T>::complex ? 0.5 : 0);
            else if (!in)
                A.at(i, j) = cd(NAN, NAN);
        }
    A.upload();
}

// the triangle's value at (i, j): what a routine may read
static cd tri_at(const std::vector<cd> &A, int ld, bool lower, bool unit, int i, int j)
{
    if (i == j) return unit ? cd(1, 0) : A[i + (size_t)j * ld];
    bool in = lower ? i > j : i < j;
    return in ? A[i + (size_t)j * ld] : cd(0, 0);
}

typedef cublasStatus_t (*trsm_fn)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t,
                                  cublasDiagType_t, int, int, const void *, const void *, int, void *, int);

// B := X with op(A) X = alpha B (left) or X op(A) = alpha B (right):
// multiplied back, op(A) X (or X op(A)) must give alpha B.
template <typename T, typename F>
static void test_trsm(cublasHandle_t h, F fn, const char *name)
{
    const int m = 7, n = 5;
    int bad = 0;
    for (int side = 0; side < 2; side++)
        for (int fill = 0; fill < 2; fill++)
            for (int op = 0; op < 3; op++)
                for (int diag = 0; diag < 2; diag++) {
                    if (op == CUBLAS_OP_C && !elem<T>::complex && (side + fill + diag) % 2)
                        continue; // C is T for real types: a few suffice
                    int ka = side == 0 ? m : n;
                    mat<T> A(ka, ka, ka + 2), B(m, n, m + 1);
                    bool lower = fill == CUBLAS_FILL_MODE_LOWER, unit = diag == CUBLAS_DIAG_UNIT;
                    make_triangular(A, ka, lower, unit);
                    cd alpha = elem<T>::complex ? cd(0.5, -0.25) : cd(0.5, 0);
                    T a = elem<T>::from(alpha);
                    BLAS(fn(h, (cublasSideMode_t)side, (cublasFillMode_t)fill, (cublasOperation_t)op,
                            (cublasDiagType_t)diag, m, n, &a, A.d, A.ld, B.d, B.ld));
                    std::vector<cd> X = B.download();
                    // the effective triangular matrix T, then op(T)
                    std::vector<cd> Tm((size_t)ka * ka);
                    for (int j = 0; j < ka; j++)
                        for (int i = 0; i < ka; i++)
                            Tm[i + (size_t)j * ka] = tri_at(A.h, A.ld, lower, unit, i, j);
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i < m; i++) {
                            cd s = 0;
                            if (side == 0)
                                for (int q = 0; q < m; q++)
                                    s += op_at(Tm, ka, op, i, q) * X[q + (size_t)j * B.ld];
                            else
                                for (int q = 0; q < n; q++)
                                    s += X[i + (size_t)q * B.ld] * op_at(Tm, ka, op, q, j);
                            if (!near(s, alpha * B.at(i, j), 100 * elem<T>::tol()))
                                bad++;
                        }
                }
    report(name, bad);
}

// C = alpha op(T) B (left) or alpha B op(T), out of place and in place
template <typename T, typename F>
static void test_trmm(cublasHandle_t h, F fn, const char *name, int side, int fill, int op, int diag, bool in_place)
{
    const int m = 6, n = 4;
    int ka = side == 0 ? m : n;
    mat<T> A(ka, ka, ka), B(m, n, m + 3), C(m, n, m + 1);
    bool lower = fill == 0, unit = diag == 1;
    make_triangular(A, ka, lower, unit);
    cd alpha = elem<T>::complex ? cd(-0.75, 0.5) : cd(-0.75, 0);
    T a = elem<T>::from(alpha);
    std::vector<cd> b_before = B.download();
    BLAS(fn(h, (cublasSideMode_t)side, (cublasFillMode_t)fill, (cublasOperation_t)op, (cublasDiagType_t)diag, m, n,
            &a, A.d, A.ld, B.d, B.ld, in_place ? B.d : C.d, in_place ? B.ld : C.ld));
    std::vector<cd> got = in_place ? B.download() : C.download();
    int ldo = in_place ? B.ld : C.ld, bad = 0;
    std::vector<cd> Tm((size_t)ka * ka);
    for (int j = 0; j < ka; j++)
        for (int i = 0; i < ka; i++)
            Tm[i + (size_t)j * ka] = tri_at(A.h, A.ld, lower, unit, i, j);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            cd s = 0;
            if (side == 0)
                for (int q = 0; q < m; q++) s += op_at(Tm, ka, op, i, q) * B.at(q, j);
            else
                for (int q = 0; q < n; q++) s += B.at(i, q) * op_at(Tm, ka, op, q, j);
            if (!near(got[i + (size_t)j * ldo], alpha * s, elem<T>::tol()))
                bad++;
        }
    if (!in_place && B.download() != b_before)
        bad++; // B is only read
    report(name, bad);
}

// C = alpha S B + beta C (left) or alpha B S + beta C, S symmetric (or
// Hermitian) given by one triangle; beta = 0 over a NaN C
template <typename T, typename F>
static void test_symm(cublasHandle_t h, F fn, const char *name, bool herm, int side, int fill, bool beta_zero)
{
    const int m = 5, n = 7;
    int ka = side == 0 ? m : n;
    mat<T> A(ka, ka, ka + 1), B(m, n, m), C(m, n, m + 2);
    bool lower = fill == 0;
    std::vector<cd> S((size_t)ka * ka);
    for (int j = 0; j < ka; j++)
        for (int i = 0; i < ka; i++) {
            bool stored = i == j || (lower ? i > j : i < j);
            cd v = stored ? A.at(i, j) : A.at(j, i);
            if (herm && i == j) v = cd(v.real(), 0);
            if (!stored) v = herm ? std::conj(v) : v;
            S[i + (size_t)j * ka] = v;
        }
    for (int j = 0; j < ka; j++)
        for (int i = 0; i < ka; i++)
            if (!(i == j || (lower ? i > j : i < j))) A.at(i, j) = cd(NAN, NAN);
    if (herm)
        for (int i = 0; i < ka; i++) A.at(i, i) = cd(A.at(i, i).real(), 0); // a Hermitian diagonal is real
    A.upload();
    if (beta_zero) {
        for (auto &x : C.h) x = cd(NAN, NAN);
        C.upload();
    }
    cd alpha = elem<T>::complex ? cd(0.5, 1) : cd(0.5, 0), beta = beta_zero ? 0 : elem<T>::complex ? cd(-1, 0.25) : cd(-1, 0);
    T a = elem<T>::from(alpha), b = elem<T>::from(beta);
    BLAS(fn(h, (cublasSideMode_t)side, (cublasFillMode_t)fill, m, n, &a, A.d, A.ld, B.d, B.ld, &b, C.d, C.ld));
    std::vector<cd> got = C.download();
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            cd s = 0;
            if (side == 0)
                for (int q = 0; q < m; q++) s += S[i + (size_t)q * ka] * B.at(q, j);
            else
                for (int q = 0; q < n; q++) s += B.at(i, q) * S[q + (size_t)j * ka];
            cd want = alpha * s + (beta_zero ? cd(0, 0) : beta * C.at(i, j));
            if (!near(got[i + (size_t)j * C.ld], want, elem<T>::tol()))
                bad++;
        }
    report(name, bad);
}

// C = alpha op(A) op(A)^T + beta C (syrk) or ^H (herk), one triangle only
template <typename T, typename S, typename F>
static void test_syrk(cublasHandle_t h, F fn, const char *name, bool herm, int fill, int op)
{
    const int n = 6, k = 4;
    int ar = op == CUBLAS_OP_N ? n : k, ac = op == CUBLAS_OP_N ? k : n;
    mat<T> A(ar, ac, ar + 1), C(n, n, n + 2);
    bool lower = fill == 0;
    if (herm)
        for (int i = 0; i < n; i++) C.at(i, i) = cd(C.at(i, i).real(), 0);
    C.upload();
    S alpha = (S)0.75, beta = (S)-0.5;
    BLAS(fn(h, (cublasFillMode_t)fill, (cublasOperation_t)op, n, k, &alpha, A.d, A.ld, &beta, C.d, C.ld));
    std::vector<cd> got = C.download();
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            bool in = i == j || (lower ? i > j : i < j);
            cd want;
            if (!in) {
                want = C.at(i, j); // untouched
            } else {
                cd s = 0;
                for (int q = 0; q < k; q++) {
                    cd x = op_at(A.h, A.ld, op, i, q), y = op_at(A.h, A.ld, op, j, q);
                    s += x * (herm ? std::conj(y) : y);
                }
                want = (double)alpha * s + (double)beta * C.at(i, j);
            }
            if (!near(got[i + (size_t)j * C.ld], want, elem<T>::tol()))
                bad++;
        }
    report(name, bad);
}

// y_i = alpha op(A_i) x_i + beta y_i over a batch: arrays of pointers
// (batched) or strides (strided)
template <typename T, typename FB, typename FS>
static void test_gemv_batched(cublasHandle_t h, FB batched, FS strided, const char *name, int op)
{
    const int m = 5, n = 3, batch = 3, lda = 6;
    int xn = op == CUBLAS_OP_N ? n : m, yn = op == CUBLAS_OP_N ? m : n;
    const long long sa = lda * n + 2, sx = xn * 2 + 1, sy = yn * 3;
    mat<T> A(sa, batch, sa), X(sx, batch, sx), Y1(sy, batch, sy), Y2(sy, batch, sy);
    Y2.h = Y1.h;
    Y2.upload();
    cd alpha = elem<T>::complex ? cd(1.5, -0.5) : cd(1.5, 0), beta = elem<T>::complex ? cd(0.25, 1) : cd(0.25, 0);
    T a = elem<T>::from(alpha), b = elem<T>::from(beta);
    std::vector<const T *> pa, px;
    std::vector<T *> py;
    for (int i = 0; i < batch; i++) {
        pa.push_back(A.d + i * sa);
        px.push_back(X.d + i * sx);
        py.push_back(Y1.d + i * sy);
    }
    const T **dpa;
    const T **dpx;
    T **dpy;
    CHECK(cudaMalloc(&dpa, batch * sizeof(T *)));
    CHECK(cudaMalloc(&dpx, batch * sizeof(T *)));
    CHECK(cudaMalloc(&dpy, batch * sizeof(T *)));
    CHECK(cudaMemcpy(dpa, pa.data(), batch * sizeof(T *), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dpx, px.data(), batch * sizeof(T *), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dpy, py.data(), batch * sizeof(T *), cudaMemcpyHostToDevice));
    BLAS(batched(h, (cublasOperation_t)op, m, n, &a, dpa, lda, dpx, 2, &b, dpy, 3, batch));
    BLAS(strided(h, (cublasOperation_t)op, m, n, &a, A.d, lda, sa, X.d, 2, sx, &b, Y2.d, 3, sy, batch));
    std::vector<cd> g1 = Y1.download(), g2 = Y2.download();
    int bad = 0;
    for (int bi = 0; bi < batch; bi++)
        for (int i = 0; i < yn; i++) {
            cd s = 0;
            for (int q = 0; q < xn; q++)
                s += op_at(std::vector<cd>(A.h.begin() + bi * sa, A.h.begin() + (bi + 1) * sa), lda, op, i, q) *
                     X.h[bi * sx + q * 2];
            cd want = alpha * s + beta * Y1.h[bi * sy + i * 3];
            if (!near(g1[bi * sy + i * 3], want, elem<T>::tol()) || !near(g2[bi * sy + i * 3], want, elem<T>::tol()))
                bad++;
        }
    report(name, bad);
    cudaFree(dpa);
    cudaFree(dpx);
    cudaFree(dpy);
}

// A += alpha x y^T (ger, geru) or alpha x y^H (gerc); x with a negative increment
template <typename T, typename I, typename F>
static void test_ger(cublasHandle_t h, F fn, const char *name, bool conj)
{
    const int m = 4, n = 6;
    mat<T> x(2 * m, 1, 2 * m), y(n, 1, n), A(m, n, m + 1);
    cd alpha = elem<T>::complex ? cd(0.5, 0.5) : cd(0.5, 0);
    T a = elem<T>::from(alpha);
    BLAS(fn(h, (I)m, (I)n, &a, x.d, (I)-2, y.d, (I)1, A.d, (I)A.ld));
    std::vector<cd> got = A.download();
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            cd xi = x.h[(m - 1 - i) * 2], yj = y.h[j]; // a negative increment starts at the end
            cd want = A.at(i, j) + alpha * xi * (conj ? std::conj(yj) : yj);
            if (!near(got[i + (size_t)j * A.ld], want, elem<T>::tol()))
                bad++;
        }
    report(name, bad);
}

// C = alpha op(A) op(B) + beta C, complex
template <typename T, typename I, typename F>
static void test_cgemm(cublasHandle_t h, F fn, const char *name, int ta, int tb)
{
    const int m = 5, n = 4, k = 6;
    int ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m, br = tb == CUBLAS_OP_N ? k : n,
        bc = tb == CUBLAS_OP_N ? n : k;
    mat<T> A(ar, ac, ar + 1), B(br, bc, br + 2), C(m, n, m);
    cd alpha(0.5, -1), beta(0.25, 0.5);
    T a = elem<T>::from(alpha), b = elem<T>::from(beta);
    BLAS(fn(h, (cublasOperation_t)ta, (cublasOperation_t)tb, (I)m, (I)n, (I)k, &a, A.d, (I)A.ld, B.d, (I)B.ld, &b,
            C.d, (I)C.ld));
    std::vector<cd> got = C.download();
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            cd s = 0;
            for (int q = 0; q < k; q++) s += op_at(A.h, A.ld, ta, i, q) * op_at(B.h, B.ld, tb, q, j);
            if (!near(got[i + (size_t)j * C.ld], alpha * s + beta * C.at(i, j), elem<T>::tol()))
                bad++;
        }
    report(name, bad);
}

// the batched complex gemms: strided (float) and arrays of pointers (double)
static void test_cgemm_batched(cublasHandle_t h)
{
    const int m = 3, n = 4, k = 2, batch = 2;
    mat<cuComplex> A(m * k, batch, m * k), B(k * n, batch, k * n), C(m * n, batch, m * n);
    mat<cuDoubleComplex> A2(m * k, batch, m * k), B2(k * n, batch, k * n), C2(m * n, batch, m * n);
    cuComplex a = make_cuComplex(1, 0.5f), b = make_cuComplex(0, 0);
    cuDoubleComplex a2 = make_cuDoubleComplex(-0.5, 1), b2 = make_cuDoubleComplex(1, 0);
    BLAS(cublasCgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &a, A.d, m, m * k, B.d, k, k * n, &b, C.d, m,
                                   m * n, batch));
    std::vector<const cuDoubleComplex *> pa, pb;
    std::vector<cuDoubleComplex *> pc;
    for (int i = 0; i < batch; i++) {
        pa.push_back(A2.d + i * m * k);
        pb.push_back(B2.d + i * k * n);
        pc.push_back(C2.d + i * m * n);
    }
    void *dp;
    CHECK(cudaMalloc(&dp, 3 * batch * sizeof(void *)));
    const cuDoubleComplex **dpa = (const cuDoubleComplex **)dp, **dpb = dpa + batch;
    cuDoubleComplex **dpc = (cuDoubleComplex **)(dpa + 2 * batch);
    CHECK(cudaMemcpy(dpa, pa.data(), batch * sizeof(void *), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dpb, pb.data(), batch * sizeof(void *), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dpc, pc.data(), batch * sizeof(void *), cudaMemcpyHostToDevice));
    BLAS(cublasZgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &a2, dpa, m, dpb, k, &b2, dpc, m, batch));
    std::vector<cd> g = C.download(), g2 = C2.download();
    int bad = 0;
    for (int bi = 0; bi < batch; bi++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                cd s = 0, s2 = 0;
                for (int q = 0; q < k; q++) {
                    s += A.h[bi * m * k + i + q * m] * B.h[bi * k * n + q + j * k];
                    s2 += A2.h[bi * m * k + i + q * m] * B2.h[bi * k * n + q + j * k];
                }
                if (!near(g[bi * m * n + i + j * m], cd(1, 0.5) * s, 2e-4))
                    bad++;
                if (!near(g2[bi * m * n + i + j * m], cd(-0.5, 1) * s2 + C2.h[bi * m * n + i + j * m], 1e-10))
                    bad++;
            }
    report("Cgemm strided batched / Zgemm batched", bad);
    cudaFree(dp);
}

// the complex level-1 routines and the complex gemv, each against a loop
static void test_complex_level12(cublasHandle_t h)
{
    const int n = 9;
    mat<cuComplex> x(n, 1, n), y(n, 1, n);
    mat<cuDoubleComplex> zx(2 * n, 1, 2 * n), zy(n, 1, n);
    int bad = 0;
    cuComplex a = make_cuComplex(0.5f, -2), r;
    BLAS(cublasCaxpy(h, n, &a, x.d, 1, y.d, 1));
    std::vector<cd> gy = y.download();
    for (int i = 0; i < n; i++)
        if (!near(gy[i], y.h[i] + cd(0.5, -2) * x.h[i], 2e-4)) bad++;
    y.h = gy;
    cd dotu = 0, dotc = 0;
    for (int i = 0; i < n; i++) {
        dotu += x.h[i] * y.h[i];
        dotc += std::conj(x.h[i]) * y.h[i];
    }
    BLAS(cublasCdotu(h, n, x.d, 1, y.d, 1, &r));
    if (!near(cd(r.x, r.y), dotu, 2e-4)) bad++;
    BLAS(cublasCdotc(h, n, x.d, 1, y.d, 1, &r));
    if (!near(cd(r.x, r.y), dotc, 2e-4)) bad++;
    double norm = 0, asum = 0;
    for (int i = 0; i < n; i++) {
        norm += std::norm(x.h[i]);
        asum += std::fabs(x.h[i].real()) + std::fabs(x.h[i].imag());
    }
    float fr;
    BLAS(cublasScnrm2(h, n, x.d, 1, &fr));
    if (!near(fr, std::sqrt(norm), 2e-4)) bad++;
    BLAS(cublasScasum(h, n, x.d, 1, &fr));
    if (!near(fr, asum, 2e-4)) bad++;
    // iamax: the first largest |re| + |im|
    int best = 0, idx = 0;
    for (int i = 1; i < n; i++)
        if (std::fabs(x.h[i].real()) + std::fabs(x.h[i].imag()) >
            std::fabs(x.h[best].real()) + std::fabs(x.h[best].imag()))
            best = i;
    BLAS(cublasIcamax(h, n, x.d, 1, &idx));
    if (idx != best + 1) bad++;
    cuComplex s = make_cuComplex(0, 1);
    float sr = -3;
    BLAS(cublasCscal(h, n, &s, x.d, 1));
    BLAS(cublasCsscal(h, n, &sr, x.d, 1));
    std::vector<cd> gx = x.download();
    for (int i = 0; i < n; i++)
        if (!near(gx[i], x.h[i] * cd(0, 1) * -3.0, 2e-4)) bad++;
    x.h = gx;
    BLAS(cublasCswap(h, n, x.d, 1, y.d, 1));
    if (x.download() != y.h || y.download() != x.h) bad++;
    BLAS(cublasCcopy(h, n, x.d, 1, y.d, 1));
    if (y.download() != y.h) bad++; // x now holds the old y
    report("complex float level 1", bad);

    // double complex, the _64 forms, an increment of 2
    bad = 0;
    cuDoubleComplex za = make_cuDoubleComplex(-1, 0.5), zr;
    BLAS(cublasZaxpy_64(h, (int64_t)n, &za, zx.d, (int64_t)2, zy.d, (int64_t)1));
    std::vector<cd> gzy = zy.download();
    for (int i = 0; i < n; i++)
        if (!near(gzy[i], zy.h[i] + cd(-1, 0.5) * zx.h[2 * i], 1e-10)) bad++;
    zy.h = gzy;
    cd zdot = 0;
    double znorm = 0;
    for (int i = 0; i < n; i++) {
        zdot += std::conj(zx.h[2 * i]) * zy.h[i];
        znorm += std::norm(zx.h[2 * i]);
    }
    BLAS(cublasZdotc_64(h, (int64_t)n, zx.d, (int64_t)2, zy.d, (int64_t)1, &zr));
    if (!near(cd(zr.x, zr.y), zdot, 1e-10)) bad++;
    double dr;
    BLAS(cublasDznrm2_64(h, (int64_t)n, zx.d, (int64_t)2, &dr));
    if (!near(dr, std::sqrt(znorm), 1e-10)) bad++;
    int64_t i64 = 0;
    int zbest = 0;
    for (int i = 1; i < n; i++)
        if (std::fabs(zy.h[i].real()) + std::fabs(zy.h[i].imag()) >
            std::fabs(zy.h[zbest].real()) + std::fabs(zy.h[zbest].imag()))
            zbest = i;
    BLAS(cublasIzamax_64(h, (int64_t)n, zy.d, (int64_t)1, &i64));
    if (i64 != zbest + 1) bad++;
    report("complex double level 1 (_64)", bad);

    // gemv: C (conjugate transpose) for cuComplex, T for cuDoubleComplex _64
    bad = 0;
    const int m = 4, k = 3;
    mat<cuComplex> A(m, k, m + 1), gx2(m, 1, m), gy2(k, 1, k);
    cuComplex ga = make_cuComplex(1, 1), gb = make_cuComplex(0.5f, 0);
    BLAS(cublasCgemv(h, CUBLAS_OP_C, m, k, &ga, A.d, A.ld, gx2.d, 1, &gb, gy2.d, 1));
    std::vector<cd> got = gy2.download();
    for (int j = 0; j < k; j++) {
        cd s2 = 0;
        for (int i = 0; i < m; i++) s2 += std::conj(A.at(i, j)) * gx2.h[i];
        if (!near(got[j], cd(1, 1) * s2 + 0.5 * gy2.h[j], 2e-4)) bad++;
    }
    mat<cuDoubleComplex> ZA(m, k, m), zx2(m, 1, m), zy2(k, 1, k);
    cuDoubleComplex zga = make_cuDoubleComplex(0, -1), zgb = make_cuDoubleComplex(0, 0);
    for (auto &v : zy2.h) v = cd(NAN, NAN); // beta = 0: y is not read
    zy2.upload();
    BLAS(cublasZgemv_64(h, CUBLAS_OP_T, (int64_t)m, (int64_t)k, &zga, ZA.d, (int64_t)m, zx2.d, (int64_t)1, &zgb,
                        zy2.d, (int64_t)1));
    got = zy2.download();
    for (int j = 0; j < k; j++) {
        cd s2 = 0;
        for (int i = 0; i < m; i++) s2 += ZA.at(i, j) * zx2.h[i];
        if (!near(got[j], cd(0, -1) * s2, 1e-10)) bad++;
    }
    report("complex gemv", bad);
}

// the real _64 forms of what existed with int sizes
static void test_real_64(cublasHandle_t h)
{
    const int n = 11;
    mat<float> x(n, 1, n), y(n, 1, n);
    mat<double> A(n, 3, n), v(3, 1, 3), w(n, 1, n);
    int bad = 0;
    float a = 2, r = 0;
    BLAS(cublasSaxpy_v2_64(h, (int64_t)n, &a, x.d, (int64_t)1, y.d, (int64_t)1));
    std::vector<cd> gy = y.download();
    double dot = 0;
    for (int i = 0; i < n; i++) {
        if (!near(gy[i], y.h[i] + 2.0 * x.h[i], 2e-4)) bad++;
        dot += x.h[i].real() * gy[i].real();
    }
    BLAS(cublasSdot_v2_64(h, (int64_t)n, x.d, (int64_t)1, y.d, (int64_t)1, &r));
    if (!near(r, dot, 2e-4)) bad++;
    int64_t idx = 0;
    int best = 0;
    for (int i = 1; i < n; i++)
        if (std::fabs(x.h[i].real()) > std::fabs(x.h[best].real())) best = i;
    BLAS(cublasIsamax_v2_64(h, (int64_t)n, x.d, (int64_t)1, &idx));
    if (idx != best + 1) bad++;
    double one = 1, zero = 0;
    BLAS(cublasDgemv_v2_64(h, CUBLAS_OP_N, (int64_t)n, (int64_t)3, &one, A.d, (int64_t)n, v.d, (int64_t)1, &zero,
                           w.d, (int64_t)1));
    std::vector<cd> gw = w.download();
    for (int i = 0; i < n; i++) {
        cd s = 0;
        for (int q = 0; q < 3; q++) s += A.at(i, q) * v.h[q];
        if (!near(gw[i], s, 1e-10)) bad++;
    }
    report("real _64 level 1/2", bad);

    // SgemmEx_64: float operands, C = A B (3 x 4 x 2)
    bad = 0;
    mat<float> GA(3, 2, 3), GB(2, 4, 2), GC(3, 4, 3);
    float ga = 1, gb = 0;
    BLAS(cublasSgemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, (int64_t)3, (int64_t)4, (int64_t)2, &ga, GA.d, CUDA_R_32F,
                          (int64_t)3, GB.d, CUDA_R_32F, (int64_t)2, &gb, GC.d, CUDA_R_32F, (int64_t)3));
    std::vector<cd> gc = GC.download();
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 3; i++)
            if (!near(gc[i + j * 3], GA.at(i, 0) * GB.at(0, j) + GA.at(i, 1) * GB.at(1, j), 2e-4)) bad++;
    report("SgemmEx_64", bad);

    // Set/GetMatrix and Set/GetVector(Async) _64: a 3 x 4 block into a
    // matrix with ld 5 and back; every other element of a vector
    bad = 0;
    std::vector<float> hm(3 * 4), back(3 * 4, 0), hv(6), vback(12, -1);
    for (size_t i = 0; i < hm.size(); i++) hm[i] = (float)i + 0.5f;
    for (size_t i = 0; i < hv.size(); i++) hv[i] = (float)i - 2;
    float *dm, *dv;
    CHECK(cudaMalloc(&dm, 5 * 4 * sizeof(float)));
    CHECK(cudaMalloc(&dv, 12 * sizeof(float)));
    BLAS(cublasSetMatrix_64(3, 4, sizeof(float), hm.data(), 3, dm, 5));
    BLAS(cublasGetMatrix_64(3, 4, sizeof(float), dm, 5, back.data(), 3));
    if (back != hm) bad++;
    BLAS(cublasSetVector_64(6, sizeof(float), hv.data(), 1, dv, 2));
    BLAS(cublasGetVectorAsync_64(6, sizeof(float), dv, 2, vback.data(), 2, 0));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 6; i++)
        if (vback[2 * i] != hv[i] || vback[2 * i + 1] != -1) bad++;
    report("Set/GetMatrix_64, Set/GetVector(Async)_64", bad);
    CHECK(cudaFree(dm));
    CHECK(cudaFree(dv));
}

// Only the lower triangles of A (trsm) and C (syrk, beta 1) are ever
// written: under initcheck (cublas_level3_checkers) the calls must not be
// reported, as they read nothing else.
static void test_triangle_only(cublasHandle_t h)
{
    const int n = 4;
    double *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, n * n * sizeof(double)));
    CHECK(cudaMalloc(&dB, n * sizeof(double)));
    CHECK(cudaMalloc(&dC, n * n * sizeof(double)));
    double L[n * n] = {0}, b[n] = {1, 2, 3, 4};
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) L[i + j * n] = i == j ? 2 : 0.5;
    for (int j = 0; j < n; j++) {
        CHECK(cudaMemcpy(dA + j * n + j, L + j * n + j, (n - j) * sizeof(double), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dC + j * n + j, L + j * n + j, (n - j) * sizeof(double), cudaMemcpyHostToDevice));
    }
    CHECK(cudaMemcpy(dB, b, sizeof b, cudaMemcpyHostToDevice));
    double one = 1;
    BLAS(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, 1, &one, dA, n,
                     dB, n));
    BLAS(cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, 1, &one, dB, n, &one, dC, n));
    double x[n], c[n * n];
    CHECK(cudaMemcpy(x, dB, sizeof x, cudaMemcpyDeviceToHost));
    for (int j = 0; j < n; j++)
        CHECK(cudaMemcpy(c + j * n + j, dC + j * n + j, (n - j) * sizeof(double), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) { // forward substitution, by hand
        double s = b[i];
        for (int q = 0; q < i; q++) s -= L[i + q * n] * x[q];
        if (std::fabs(x[i] - s / L[i + i * n]) > 1e-12) bad++;
    }
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++)
            if (std::fabs(c[i + j * n] - (L[i + j * n] + x[i] * x[j])) > 1e-12) bad++;
    report("trsm and syrk on lower triangles only", bad);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
}

// x := op(T)^-1 x or op(T) x, T triangular (NaN outside its triangle):
// checked by multiplying back / directly
template <typename T, typename I, typename F>
static void test_trsv(cublasHandle_t h, F fn, const char *name, bool solve, int fill, int op, int diag)
{
    const int n = 6;
    mat<T> A(n, n, n + 1), x(2 * n, 1, 2 * n);
    bool lower = fill == 0, unit = diag == 1;
    make_triangular(A, n, lower, unit);
    std::vector<cd> before = x.download();
    BLAS(fn(h, (cublasFillMode_t)fill, (cublasOperation_t)op, (cublasDiagType_t)diag, (I)n, A.d, (I)A.ld, x.d, (I)2));
    std::vector<cd> got = x.download(), Tm((size_t)n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) Tm[i + (size_t)j * n] = tri_at(A.h, A.ld, lower, unit, i, j);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        cd s = 0;
        for (int q = 0; q < n; q++) s += op_at(Tm, n, op, i, q) * (solve ? got[2 * q] : x.h[2 * q]);
        if (!near(solve ? s : got[2 * i], solve ? x.h[2 * i] : s, 100 * elem<T>::tol())) bad++;
        if (got[2 * i + 1] != before[2 * i + 1]) bad++; // between the increments: untouched
    }
    report(name, bad);
}

// y = alpha S x + beta y, S symmetric / Hermitian from one triangle (NaN
// in the other)
template <typename T, typename F>
static void test_symv(cublasHandle_t h, F fn, const char *name, int fill)
{
    const int n = 5;
    mat<T> A(n, n, n), x(n, 1, n), y(n, 1, n);
    bool lower = fill == 0, herm = elem<T>::complex;
    std::vector<cd> S((size_t)n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            bool stored = i == j || (lower ? i > j : i < j);
            cd v = stored ? A.at(i, j) : (herm ? std::conj(A.at(j, i)) : A.at(j, i));
            if (herm && i == j) v = cd(v.real(), 0);
            S[i + (size_t)j * n] = v;
        }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            if (!(i == j || (lower ? i > j : i < j))) A.at(i, j) = cd(NAN, NAN);
    A.upload();
    cd alpha = herm ? cd(0.5, 0.5) : cd(0.5, 0), beta = herm ? cd(1, -1) : cd(2, 0);
    T a = elem<T>::from(alpha), b = elem<T>::from(beta);
    BLAS(fn(h, (cublasFillMode_t)fill, n, &a, A.d, n, x.d, 1, &b, y.d, 1));
    std::vector<cd> got = y.download();
    int bad = 0;
    for (int i = 0; i < n; i++) {
        cd s = 0;
        for (int q = 0; q < n; q++) s += S[i + (size_t)q * n] * x.h[q];
        if (!near(got[i], alpha * s + beta * y.h[i], elem<T>::tol())) bad++;
    }
    report(name, bad);
}

// A += alpha x x^T (syr) / x x^H (her), or alpha x y^T + alpha y x^T (syr2)
// / alpha x y^H + conj(alpha) y x^H (her2): only the named triangle changes
template <typename T, typename S, typename F>
static void test_syr(cublasHandle_t h, F fn, const char *name, int fill, bool two)
{
    const int n = 5;
    mat<T> A(n, n, n + 1), x(n, 1, n), y(n, 1, n);
    bool lower = fill == 0, herm = elem<T>::complex;
    if (herm)
        for (int i = 0; i < n; i++) A.at(i, i) = cd(A.at(i, i).real(), 0);
    A.upload();
    cd alpha = herm && two ? cd(0.5, -1) : cd(0.5, 0);
    T a2 = elem<T>::from(alpha);
    S a1 = (S)0.5;
    cublasStatus_t st;
    if (two)
        st = ((cublasStatus_t(*)(cublasHandle_t, cublasFillMode_t, int, const T *, const T *, int, const T *, int, T *,
                                 int))fn)(h, (cublasFillMode_t)fill, n, &a2, x.d, 1, y.d, 1, A.d, A.ld);
    else
        st = ((cublasStatus_t(*)(cublasHandle_t, cublasFillMode_t, int, const S *, const T *, int, T *, int))fn)(
            h, (cublasFillMode_t)fill, n, &a1, x.d, 1, A.d, A.ld);
    EXPECT(st == CUBLAS_STATUS_SUCCESS);
    std::vector<cd> got = A.download();
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            bool in = i == j || (lower ? i > j : i < j);
            cd want = A.at(i, j);
            if (in) {
                cd xj = herm ? std::conj(x.h[j]) : x.h[j], yj = herm ? std::conj(y.h[j]) : y.h[j];
                if (two)
                    want += alpha * x.h[i] * yj + (herm ? std::conj(alpha) : alpha) * y.h[i] * xj;
                else
                    want += alpha * x.h[i] * xj;
            }
            if (!near(got[i + (size_t)j * A.ld], want, elem<T>::tol())) bad++;
        }
    report(name, bad);
}

// C = alpha op(A) + beta op(B); dgmm: C = diag(x) A or A diag(x), x
// walked backwards for a negative increment
template <typename T>
static void test_geam_dgmm(cublasHandle_t h, const char *name,
                           cublasStatus_t (*geam)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                                  const T *, const T *, int, const T *, const T *, int, T *, int),
                           cublasStatus_t (*dgmm)(cublasHandle_t, cublasSideMode_t, int, int, const T *, int,
                                                  const T *, int, T *, int))
{
    const int m = 4, n = 3;
    int opa = elem<T>::complex ? CUBLAS_OP_C : CUBLAS_OP_T;
    mat<T> A(n, m, n + 1), B(m, n, m), C(m, n, m + 2), x(2 * m, 1, 2 * m), D(m, n, m);
    cd alpha = elem<T>::complex ? cd(1, 2) : cd(1.5, 0), beta = cd(-0.5, 0);
    T a = elem<T>::from(alpha), b = elem<T>::from(beta);
    BLAS(geam(h, (cublasOperation_t)opa, CUBLAS_OP_N, m, n, &a, A.d, A.ld, &b, B.d, B.ld, C.d, C.ld));
    std::vector<cd> got = C.download();
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            if (!near(got[i + (size_t)j * C.ld], alpha * op_at(A.h, A.ld, opa, i, j) + beta * B.at(i, j),
                      elem<T>::tol()))
                bad++;
    // dgmm left, in place in B (C = B), incx -2
    BLAS(dgmm(h, CUBLAS_SIDE_LEFT, m, n, B.d, B.ld, x.d, -2, B.d, B.ld));
    got = B.download();
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            if (!near(got[i + (size_t)j * B.ld], x.h[(m - 1 - i) * 2] * B.at(i, j), elem<T>::tol())) bad++;
    // dgmm right into D, incx 1
    BLAS(dgmm(h, CUBLAS_SIDE_RIGHT, m, n, C.d, C.ld, x.d, 1, D.d, D.ld));
    std::vector<cd> cvals = C.download();
    got = D.download();
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            if (!near(got[i + (size_t)j * D.ld], cvals[i + (size_t)j * C.ld] * x.h[j], elem<T>::tol())) bad++;
    report(name, bad);
}

// C = alpha op(A) op(B)^T + alpha op(B) op(A)^T + beta C (syr2k) or
// alpha op(A) op(B)^H + conj(alpha) op(B) op(A)^H + beta C (her2k, real
// beta): one triangle only
template <typename T, typename S, typename F>
static void test_syr2k(cublasHandle_t h, F fn, const char *name, bool herm, int fill, int op)
{
    const int n = 5, k = 3;
    int ar = op == CUBLAS_OP_N ? n : k, ac = op == CUBLAS_OP_N ? k : n;
    mat<T> A(ar, ac, ar), B(ar, ac, ar + 1), C(n, n, n);
    if (herm)
        for (int i = 0; i < n; i++) C.at(i, i) = cd(C.at(i, i).real(), 0);
    C.upload();
    cd alpha = elem<T>::complex ? cd(0.5, -0.25) : cd(0.5, 0);
    T a = elem<T>::from(alpha);
    S beta = (S)2;
    BLAS(fn(h, (cublasFillMode_t)fill, (cublasOperation_t)op, n, k, &a, A.d, A.ld, B.d, B.ld, &beta, C.d, C.ld));
    std::vector<cd> got = C.download();
    bool lower = fill == 0;
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            cd want = C.at(i, j);
            if (i == j || (lower ? i > j : i < j)) {
                cd s1 = 0, s2 = 0;
                for (int q = 0; q < k; q++) {
                    cd aj = op_at(A.h, A.ld, op, j, q), bj = op_at(B.h, B.ld, op, j, q);
                    s1 += op_at(A.h, A.ld, op, i, q) * (herm ? std::conj(bj) : bj);
                    s2 += op_at(B.h, B.ld, op, i, q) * (herm ? std::conj(aj) : aj);
                }
                want = alpha * s1 + (herm ? std::conj(alpha) : alpha) * s2 + (double)beta * C.at(i, j);
            }
            if (!near(got[i + (size_t)j * C.ld], want, elem<T>::tol())) bad++;
        }
    report(name, bad);
}

// trsmBatched: two systems through arrays of pointers, checked by
// multiplying back
static void test_trsm_batched(cublasHandle_t h)
{
    const int m = 4, n = 3, batch = 2;
    mat<double> A0(m, m, m), A1(m, m, m), B0(m, n, m), B1(m, n, m);
    make_triangular(A0, m, false, false);
    make_triangular(A1, m, false, false);
    const double *pa[batch] = {A0.d, A1.d};
    double *pb[batch] = {B0.d, B1.d};
    void *dp;
    CHECK(cudaMalloc(&dp, 2 * batch * sizeof(void *)));
    CHECK(cudaMemcpy(dp, pa, sizeof pa, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy((void **)dp + batch, pb, sizeof pb, cudaMemcpyHostToDevice));
    double alpha = 2;
    BLAS(cublasDtrsmBatched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, n,
                            &alpha, (const double *const *)dp, m, (double *const *)dp + batch, m, batch));
    int bad = 0;
    mat<double> *As[batch] = {&A0, &A1}, *Bs[batch] = {&B0, &B1};
    for (int bi = 0; bi < batch; bi++) {
        std::vector<cd> X = Bs[bi]->download();
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                cd s = 0;
                for (int q = i; q < m; q++) s += As[bi]->at(i, q) * X[q + j * m];
                if (!near(s, 2.0 * Bs[bi]->at(i, j), 1e-10)) bad++;
            }
    }
    report("DtrsmBatched", bad);
    cudaFree(dp);
}

int main(int argc, char **argv)
{
    cublasHandle_t h;
    BLAS(cublasCreate(&h));
    if (argc > 1 && !strcmp(argv[1], "big")) {
        // 3e9 elements: a size CBLAS's int cannot take
        float a = 1;
        cublasStatus_t st = cublasSaxpy_v2_64(h, (int64_t)3000000000LL, &a, nullptr, 1, nullptr, 1);
        EXPECT(st == CUBLAS_STATUS_NOT_SUPPORTED);
        BLAS(cublasDestroy(h));
        return finish("cublas_level3 big");
    }
    test_trsm<float>(h, cublasStrsm, "Strsm");
    test_trsm<double>(h, cublasDtrsm, "Dtrsm");
    test_trsm<cuComplex>(h, cublasCtrsm, "Ctrsm");
    test_trsm<cuDoubleComplex>(h,
                               [](cublasHandle_t hh, cublasSideMode_t s, cublasFillMode_t f, cublasOperation_t o,
                                  cublasDiagType_t d, int m, int n, const cuDoubleComplex *a,
                                  const cuDoubleComplex *A, int lda, cuDoubleComplex *B, int ldb) {
                                   return cublasZtrsm_v2_64(hh, s, f, o, d, m, n, a, A, lda, B, ldb);
                               },
                               "Ztrsm_v2_64");
    test_trmm<float>(h, cublasStrmm, "Strmm left lower N", 0, 0, CUBLAS_OP_N, 0, false);
    test_trmm<double>(h, cublasDtrmm, "Dtrmm right upper T unit, in place", 1, 1, CUBLAS_OP_T, 1, true);
    test_trmm<cuDoubleComplex>(h, cublasZtrmm, "Ztrmm left upper C", 0, 1, CUBLAS_OP_C, 0, false);
    test_symm<float>(h, cublasSsymm, "Ssymm left lower", false, 0, 0, false);
    test_symm<double>(h, cublasDsymm, "Dsymm right upper, beta 0", false, 1, 1, true);
    test_symm<cuComplex>(h, cublasCsymm, "Csymm left upper", false, 0, 1, false);
    test_symm<cuComplex>(h, cublasChemm, "Chemm right lower", true, 1, 0, false);
    test_symm<cuDoubleComplex>(h, cublasZhemm, "Zhemm left upper, beta 0", true, 0, 1, true);
    test_syrk<float, float>(h, cublasSsyrk, "Ssyrk lower N", false, 0, CUBLAS_OP_N);
    test_syrk<double, double>(h, cublasDsyrk, "Dsyrk upper T", false, 1, CUBLAS_OP_T);
    test_syrk<cuComplex, float>(h, cublasCherk, "Cherk lower C", true, 0, CUBLAS_OP_C);
    test_syrk<cuDoubleComplex, double>(h, cublasZherk, "Zherk upper N", true, 1, CUBLAS_OP_N);
    {
        // a complex syrk takes complex alpha and beta
        mat<cuComplex> A(4, 3, 4), C(4, 4, 4);
        cuComplex a = make_cuComplex(0, 1), b = make_cuComplex(1, 0);
        BLAS(cublasCsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, 4, 3, &a, A.d, 4, &b, C.d, 4));
        std::vector<cd> got = C.download();
        int bad = 0;
        for (int j = 0; j < 4; j++)
            for (int i = j; i < 4; i++) {
                cd s = 0;
                for (int q = 0; q < 3; q++) s += A.at(i, q) * A.at(j, q);
                if (!near(got[i + j * 4], cd(0, 1) * s + C.at(i, j), 2e-4)) bad++;
            }
        report("Csyrk", bad);
    }
    test_gemv_batched<float>(h, cublasSgemvBatched, cublasSgemvStridedBatched, "Sgemv batched N", CUBLAS_OP_N);
    test_gemv_batched<double>(h, cublasDgemvBatched, cublasDgemvStridedBatched, "Dgemv batched T", CUBLAS_OP_T);
    test_gemv_batched<cuComplex>(h, cublasCgemvBatched, cublasCgemvStridedBatched, "Cgemv batched C", CUBLAS_OP_C);
    test_gemv_batched<cuDoubleComplex>(h, cublasZgemvBatched_64, cublasZgemvStridedBatched_64, "Zgemv batched _64",
                                       CUBLAS_OP_N);
    test_ger<float, int>(h, cublasSger, "Sger", false);
    test_ger<double, int>(h, cublasDger, "Dger", false);
    test_ger<cuComplex, int>(h, cublasCgerc, "Cgerc", true);
    test_ger<cuComplex, int>(h, cublasCgeru, "Cgeru", false);
    test_ger<cuDoubleComplex, int64_t>(h, cublasZgeru_v2_64, "Zgeru_v2_64", false);
    test_cgemm<cuComplex, int>(h, cublasCgemm, "Cgemm C N", CUBLAS_OP_C, CUBLAS_OP_N);
    test_cgemm<cuComplex, int>(h, cublasCgemm, "Cgemm N T", CUBLAS_OP_N, CUBLAS_OP_T);
    test_cgemm<cuDoubleComplex, int64_t>(h, cublasZgemm_v2_64, "Zgemm_v2_64 T C", CUBLAS_OP_T, CUBLAS_OP_C);
    test_cgemm_batched(h);
    test_triangle_only(h);
    test_syr2k<float, float>(h, cublasSsyr2k, "Ssyr2k lower N", false, 0, CUBLAS_OP_N);
    test_syr2k<double, double>(h, cublasDsyr2k, "Dsyr2k upper T", false, 1, CUBLAS_OP_T);
    test_syr2k<cuComplex, float>(h, cublasCher2k, "Cher2k upper C", true, 1, CUBLAS_OP_C);
    test_syr2k<cuDoubleComplex, double>(h, cublasZher2k, "Zher2k lower N", true, 0, CUBLAS_OP_N);
    test_trsm_batched(h);
    test_trsv<float, int>(h, cublasStrsv, "Strsv lower N", true, 0, CUBLAS_OP_N, 0);
    test_trsv<double, int>(h, cublasDtrsv, "Dtrsv upper T unit", true, 1, CUBLAS_OP_T, 1);
    test_trsv<cuDoubleComplex, int64_t>(h, cublasZtrsv_v2_64, "Ztrsv_v2_64 lower C", true, 0, CUBLAS_OP_C, 0);
    test_trsv<double, int>(h, cublasDtrmv, "Dtrmv upper N", false, 1, CUBLAS_OP_N, 0);
    test_trsv<cuComplex, int>(h, cublasCtrmv, "Ctrmv lower C unit", false, 0, CUBLAS_OP_C, 1);
    test_symv<float>(h, cublasSsymv, "Ssymv lower", 0);
    test_symv<double>(h, cublasDsymv, "Dsymv upper", 1);
    test_symv<cuComplex>(h, cublasChemv, "Chemv upper", 1);
    test_symv<cuDoubleComplex>(h, cublasZhemv, "Zhemv lower", 0);
    test_syr<float, float>(h, (void *)cublasSsyr, "Ssyr lower", 0, false);
    test_syr<double, double>(h, (void *)cublasDsyr2, "Dsyr2 upper", 1, true);
    test_syr<cuComplex, float>(h, (void *)cublasCher, "Cher upper", 1, false);
    test_syr<cuDoubleComplex, double>(h, (void *)cublasZher2, "Zher2 lower", 0, true);
    test_geam_dgmm<float>(h, "Sgeam, Sdgmm", cublasSgeam, cublasSdgmm);
    test_geam_dgmm<cuDoubleComplex>(h, "Zgeam, Zdgmm", cublasZgeam, cublasZdgmm);
    test_complex_level12(h);
    test_real_64(h);
    BLAS(cublasDestroy(h));
    return finish("cublas_level3");
}
