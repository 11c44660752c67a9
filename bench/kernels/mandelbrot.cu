// mandelbrot: escape-iteration counts over a width x height grid covering
// [-2, 1] x [-1.5, 1.5]; neighbouring pixels leave the loop at different
// iterations, so warps diverge. Launch: 2D, one thread per pixel.

extern "C" __global__ void mandelbrot(unsigned *iters, unsigned width, unsigned height, unsigned max_iter)
{
    unsigned px = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height)
        return;
    float cr = -2.0f + 3.0f * (float)px / (float)width;
    float ci = -1.5f + 3.0f * (float)py / (float)height;
    float zr = 0.0f, zi = 0.0f;
    unsigned k = 0;
    while (k < max_iter && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        k++;
    }
    iters[py * width + px] = k;
}
