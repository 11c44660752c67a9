/* The launch watchdog (watchdog.h): one sleeping thread per launch with a
 * --timeout, woken early when the launch ends. It only sets a flag; it
 * never touches the launch's blocks, which stop themselves at their next
 * check of the flag. */
#include "config.h"
#include "exec/watchdog.h"
#include "util.h"

#include <errno.h>
#include <string.h>

static void *watchdog_main(void *arg)
{
    exec_watchdog *wd = arg;
    pthread_mutex_lock(&wd->lock);
    while (!wd->stopping) {
        int rc = pthread_cond_timedwait(&wd->wake, &wd->lock, &wd->deadline);
        if (rc == ETIMEDOUT) {
            __atomic_store_n(wd->expired, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    pthread_mutex_unlock(&wd->lock);
    return NULL;
}

kemu_status exec_watchdog_start(exec_watchdog *wd, double deadline, int *expired, kemu_error *err)
{
    memset(wd, 0, sizeof *wd);
    if (deadline <= 0)
        return KEMU_OK;
    wd->expired = expired;
    wd->deadline.tv_sec = (time_t)deadline;
    wd->deadline.tv_nsec = (long)((deadline - (double)wd->deadline.tv_sec) * 1e9);
    if (wd->deadline.tv_nsec >= 1000000000L) {
        wd->deadline.tv_sec++;
        wd->deadline.tv_nsec -= 1000000000L;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > wd->deadline.tv_sec || (now.tv_sec == wd->deadline.tv_sec && now.tv_nsec >= wd->deadline.tv_nsec)) {
        /* already past it: no block starts */
        __atomic_store_n(expired, 1, __ATOMIC_RELAXED);
        return KEMU_OK;
    }
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (!rc)
        rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (!rc)
        rc = pthread_cond_init(&wd->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (rc)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "cannot set up the --timeout watchdog: %s", strerror(rc));
    pthread_mutex_init(&wd->lock, NULL);
    rc = pthread_create(&wd->thread, NULL, watchdog_main, wd);
    if (rc) {
        pthread_cond_destroy(&wd->wake);
        pthread_mutex_destroy(&wd->lock);
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "cannot start the --timeout watchdog thread: %s",
                          strerror(rc));
    }
    wd->running = 1;
    return KEMU_OK;
}

void exec_watchdog_stop(exec_watchdog *wd)
{
    if (!wd->running)
        return;
    pthread_mutex_lock(&wd->lock);
    wd->stopping = 1;
    pthread_cond_signal(&wd->wake);
    pthread_mutex_unlock(&wd->lock);
    pthread_join(wd->thread, NULL);
    pthread_cond_destroy(&wd->wake);
    pthread_mutex_destroy(&wd->lock);
    wd->running = 0;
}
