/* The launch watchdog (watchdog.h): a sleeping thread per device, woken
 * when a launch arms a timer and at the earliest deadline. It only sets
 * flags; it never touches a launch's blocks, which stop themselves at
 * their next check of the flag. */
#include "config.h"
#include "exec/watchdog.h"
#include "util.h"

#include <string.h>

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static struct timespec add_seconds(struct timespec t, double seconds)
{
    time_t whole = (time_t)seconds;
    t.tv_sec += whole;
    t.tv_nsec += (long)((seconds - (double)whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void *watchdog_main(void *arg)
{
    exec_watchdog *wd = arg;
    pthread_mutex_lock(&wd->lock);
    while (!wd->stopping) {
        const struct timespec *first = NULL;
        for (const exec_watchdog_timer *t = wd->timers; t; t = t->next) {
            if (t->expired && !t->fired && (!first || before(&t->deadline, first)))
                first = &t->deadline;
            if (t->tick && (!first || before(&t->next_tick, first)))
                first = &t->next_tick;
        }
        if (!first) {
            pthread_cond_wait(&wd->wake, &wd->lock);
            continue;
        }
        struct timespec until = *first;
        pthread_cond_timedwait(&wd->wake, &wd->lock, &until);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        for (exec_watchdog_timer *t = wd->timers; t; t = t->next) {
            if (t->expired && !t->fired && !before(&now, &t->deadline)) {
                __atomic_store_n(t->expired, 1, __ATOMIC_RELAXED);
                t->fired = 1;
            }
            if (t->tick && !before(&now, &t->next_tick)) {
                /* under the lock: disarming waits for a tick under way */
                t->tick(t->ctx);
                t->next_tick = add_seconds(now, t->period);
            }
        }
    }
    pthread_mutex_unlock(&wd->lock);
    return NULL;
}

void exec_watchdog_init(exec_watchdog *wd)
{
    memset(wd, 0, sizeof *wd);
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr))
        return;
    if (!pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) && !pthread_cond_init(&wd->wake, &attr)) {
        if (!pthread_mutex_init(&wd->lock, NULL))
            wd->ready = 1;
        else
            pthread_cond_destroy(&wd->wake);
    }
    pthread_condattr_destroy(&attr);
}

void exec_watchdog_destroy(exec_watchdog *wd)
{
    if (!wd->ready)
        return;
    if (wd->started) {
        pthread_mutex_lock(&wd->lock);
        wd->stopping = 1;
        pthread_cond_signal(&wd->wake);
        pthread_mutex_unlock(&wd->lock);
        pthread_join(wd->thread, NULL);
    }
    pthread_cond_destroy(&wd->wake);
    pthread_mutex_destroy(&wd->lock);
    wd->ready = 0;
}

kemu_status exec_watchdog_arm(exec_watchdog *wd, exec_watchdog_timer *t, double deadline, int *expired,
                              kemu_error *err)
{
    return exec_watchdog_arm_ticking(wd, t, deadline, expired, 0, NULL, NULL, err);
}

kemu_status exec_watchdog_arm_ticking(exec_watchdog *wd, exec_watchdog_timer *t, double deadline, int *expired,
                                      double period, void (*tick)(void *ctx), void *ctx, kemu_error *err)
{
    memset(t, 0, sizeof *t);
    if (period > 0 && tick) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        t->period = period;
        t->tick = tick;
        t->ctx = ctx;
        t->next_tick = add_seconds(now, period);
    }
    if (deadline <= 0 && !t->tick)
        return KEMU_OK;
    if (deadline <= 0)
        goto arm;
    t->expired = expired;
    t->deadline.tv_sec = (time_t)deadline;
    t->deadline.tv_nsec = (long)((deadline - (double)t->deadline.tv_sec) * 1e9);
    if (t->deadline.tv_nsec >= 1000000000L) {
        t->deadline.tv_sec++;
        t->deadline.tv_nsec -= 1000000000L;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!before(&now, &t->deadline)) {
        /* already past it: no block starts */
        __atomic_store_n(expired, 1, __ATOMIC_RELAXED);
        return KEMU_OK;
    }
arm:
    if (!wd->ready)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "cannot set up the --timeout watchdog");
    pthread_mutex_lock(&wd->lock);
    if (!wd->started) {
        int rc = pthread_create(&wd->thread, NULL, watchdog_main, wd);
        if (rc) {
            pthread_mutex_unlock(&wd->lock);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "cannot start the --timeout watchdog thread: %s",
                              strerror(rc));
        }
        wd->started = 1;
    }
    t->next = wd->timers;
    wd->timers = t;
    t->armed = 1;
    pthread_cond_signal(&wd->wake);
    pthread_mutex_unlock(&wd->lock);
    return KEMU_OK;
}

void exec_watchdog_disarm(exec_watchdog *wd, exec_watchdog_timer *t)
{
    if (!t->armed)
        return;
    pthread_mutex_lock(&wd->lock);
    for (exec_watchdog_timer **pp = &wd->timers; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    pthread_mutex_unlock(&wd->lock);
    t->armed = 0;
}
