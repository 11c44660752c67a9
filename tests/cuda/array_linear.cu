// The deprecated linear copies into and out of CUDA arrays, which programs
// such as NVIDIA's simpleTexture still use: cudaMemcpyToArray,
// cudaMemcpyFromArray (and their Async forms) and cudaMemcpyArrayToArray
// copy `count` bytes from (wOffset bytes, hOffset rows), running on from the
// end of a row to the start of the next. kemu used to refuse every copy
// longer than one row with cudaErrorInvalidValue. Checked against a byte
// model of each array, with the errors for copies past the end, an offset
// outside a row, the wrong direction and a missing array.
#include <cuda_runtime.h>
#include <string.h>
#include "check.h"

enum { W1 = 37, H1 = 5, W2 = 16, H2 = 9 }; // float elements
static const size_t ROW1 = W1 * sizeof(float), ROW2 = W2 * sizeof(float);

// The model: an array's rows back to back, as the linear copies see them.
static unsigned char model1[ROW1 * H1], model2[ROW2 * H2];

static void read_back(cudaArray_t a, size_t row, size_t rows, unsigned char *out)
{
    CHECK(cudaMemcpy2DFromArray(out, row, a, 0, 0, row, rows, cudaMemcpyDeviceToHost));
}

int main()
{
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t a1, a2;
    CHECK(cudaMallocArray(&a1, &desc, W1, H1));
    CHECK(cudaMallocArray(&a2, &desc, W2, H2));
    for (size_t i = 0; i < sizeof model1; i++)
        model1[i] = (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < sizeof model2; i++)
        model2[i] = (unsigned char)(i * 13 + 5);
    CHECK(cudaMemcpy2DToArray(a1, 0, 0, model1, ROW1, ROW1, H1, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy2DToArray(a2, 0, 0, model2, ROW2, ROW2, H2, cudaMemcpyHostToDevice));
    unsigned char got1[sizeof model1], got2[sizeof model2], src[1024], dst[1024];
    for (int i = 0; i < 1024; i++)
        src[i] = (unsigned char)(255 - i);

    // host -> array: 200 bytes from byte 8 of row 1 (the rest of row 1 and 60 bytes of row 2)
    CHECK(cudaMemcpyToArray(a1, 8, 1, src, 200, cudaMemcpyHostToDevice));
    memcpy(model1 + 1 * ROW1 + 8, src, 200);
    read_back(a1, ROW1, H1, got1);
    EXPECT(memcmp(got1, model1, sizeof model1) == 0);

    // the whole array from its first byte (every row)
    CHECK(cudaMemcpyToArray(a1, 0, 0, src + 3, sizeof model1, cudaMemcpyHostToDevice));
    memcpy(model1, src + 3, sizeof model1);
    read_back(a1, ROW1, H1, got1);
    EXPECT(memcmp(got1, model1, sizeof model1) == 0);

    // array -> host: 300 bytes from byte 4 of row 3 (to the end of the last row)
    memset(dst, 0, sizeof dst);
    CHECK(cudaMemcpyFromArray(dst, a1, 4, 3, 2 * ROW1 - 4, cudaMemcpyDeviceToHost));
    EXPECT(memcmp(dst, model1 + 3 * ROW1 + 4, 2 * ROW1 - 4) == 0);

    // the Async forms, in stream order
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemcpyToArrayAsync(a2, 60, 2, src + 100, 150, cudaMemcpyHostToDevice, s));
    memcpy(model2 + 2 * ROW2 + 60, src + 100, 150);
    memset(dst, 0, sizeof dst);
    CHECK(cudaMemcpyFromArrayAsync(dst, a2, 0, 1, 5 * ROW2, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(memcmp(dst, model2 + ROW2, 5 * ROW2) == 0);

    // array -> array, rows of different lengths on the two sides
    CHECK(cudaMemcpyArrayToArray(a2, 20, 3, a1, 12, 0, 250, cudaMemcpyDeviceToDevice));
    memcpy(model2 + 3 * ROW2 + 20, model1 + 12, 250);
    read_back(a2, ROW2, H2, got2);
    EXPECT(memcmp(got2, model2, sizeof model2) == 0);
    // device memory -> array with cudaMemcpyDefault
    unsigned char *d;
    CHECK(cudaMalloc(&d, 512));
    CHECK(cudaMemcpy(d, src, 512, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToArray(a2, 0, 7, d, 2 * ROW2, cudaMemcpyDefault));
    memcpy(model2 + 7 * ROW2, src, 2 * ROW2);
    read_back(a2, ROW2, H2, got2);
    EXPECT(memcmp(got2, model2, sizeof model2) == 0);

    // errors: one byte past the end, an offset outside the row or the
    // array, the wrong direction, no array; nothing is written by them
    EXPECT_ERROR(cudaMemcpyToArray(a1, 8, 1, src, sizeof model1 - ROW1 - 8 + 1, cudaMemcpyHostToDevice),
                 cudaErrorInvalidValue);
    EXPECT_ERROR(cudaMemcpyFromArray(dst, a1, ROW1, 0, 4, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaMemcpyFromArray(dst, a1, 0, H1, 4, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaMemcpyFromArray(dst, a1, 0, 0, 4, cudaMemcpyHostToDevice), cudaErrorInvalidMemcpyDirection);
    EXPECT_ERROR(cudaMemcpyArrayToArray(a2, 0, 0, a1, 0, 0, 4, cudaMemcpyHostToDevice),
                 cudaErrorInvalidMemcpyDirection);
    EXPECT_ERROR(cudaMemcpyArrayToArray(a2, 0, 8, a1, 0, 0, ROW2 + 1, cudaMemcpyDeviceToDevice),
                 cudaErrorInvalidValue);
    EXPECT_ERROR(cudaMemcpyToArray(NULL, 0, 0, src, 4, cudaMemcpyHostToDevice), cudaErrorInvalidResourceHandle);
    read_back(a1, ROW1, H1, got1);
    EXPECT(memcmp(got1, model1, sizeof model1) == 0);
    read_back(a2, ROW2, H2, got2);
    EXPECT(memcmp(got2, model2, sizeof model2) == 0);

    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeArray(a1));
    CHECK(cudaFreeArray(a2));
    return finish("array_linear");
}
