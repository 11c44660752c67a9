/* The entry points of NVIDIA's libcurand.so.10 (libcurand10.symbols, from
 * `nm -D`) that kemu's libcurand does not implement yet: each says so once,
 * by name, on stderr and returns CURAND_STATUS_NOT_INITIALIZED (101). The
 * discrete-distribution and Sobol direction-vector functions serve the
 * device API's Poisson and quasirandom states, which need tables kemu does
 * not build. */
#include <pthread.h>
#include <stdio.h>

#define CURAND_API __attribute__((visibility("default")))
#define CURAND_STATUS_NOT_INITIALIZED 101

static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;

static int unsupported(const char *name, int *said)
{
    pthread_mutex_lock(&said_lock);
    if (!*said) {
        *said = 1;
        fprintf(stderr, "kemu: %s is not supported yet\n", name);
    }
    pthread_mutex_unlock(&said_lock);
    return CURAND_STATUS_NOT_INITIALIZED;
}

#define UNSUPPORTED(name, params, uses)                    \
    CURAND_API int name params                             \
    {                                                      \
        static int said;                                   \
        uses;                                              \
        return unsupported(#name, &said);                  \
    }

UNSUPPORTED(curandCreatePoissonDistribution, (double lambda, void **distribution), ((void)lambda, (void)distribution))
UNSUPPORTED(curandDestroyDistribution, (void *distribution), (void)distribution)
UNSUPPORTED(curandGeneratePoissonMethod, (void *generator, unsigned int *out, size_t n, double lambda, int method),
            ((void)generator, (void)out, (void)n, (void)lambda, (void)method))
UNSUPPORTED(curandGetDirectionVectors32, (void **vectors, int set), ((void)vectors, (void)set))
UNSUPPORTED(curandGetDirectionVectors64, (void **vectors, int set), ((void)vectors, (void)set))
UNSUPPORTED(curandGetScrambleConstants32, (unsigned int **constants), (void)constants)
UNSUPPORTED(curandGetScrambleConstants64, (unsigned long long **constants), (void)constants)
