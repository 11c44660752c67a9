/* The launch watchdog: one host thread per device, started by the first
 * launch with a --timeout, that sleeps until the earliest armed deadline
 * and then sets that launch's `expired` flag. The interpreter and the
 * block scheduler only read the flag (a relaxed load) at block starts, back
 * edges, indirect branches and calls, so --timeout costs the hot loop no
 * clock read, and a launch only a lock and a signal. */
#ifndef KEMU_EXEC_WATCHDOG_H
#define KEMU_EXEC_WATCHDOG_H

#include <pthread.h>
#include <time.h>
#include "kemu/kemu.h"

/* One launch's deadline, armed while the launch runs (on its stack). */
typedef struct exec_watchdog_timer {
    struct timespec deadline;  /* CLOCK_MONOTONIC */
    int *expired;              /* set to 1 (atomic) at the deadline */
    int armed, fired;
    /* optional: tick(ctx) every period seconds while armed (the progress
     * line), from the watchdog thread */
    double period;
    void (*tick)(void *ctx);
    void *ctx;
    struct timespec next_tick;
    struct exec_watchdog_timer *next;
} exec_watchdog_timer;

typedef struct exec_watchdog {
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* on CLOCK_MONOTONIC */
    pthread_t thread;
    int ready;                 /* lock and wake initialized */
    int started, stopping;
    exec_watchdog_timer *timers;
} exec_watchdog;

/* Sets up wd (no thread yet). */
void exec_watchdog_init(exec_watchdog *wd);
/* Stops and joins wd's thread if it was started. */
void exec_watchdog_destroy(exec_watchdog *wd);
/* Arms t to set *expired at `deadline` (seconds on vm_now's clock,
 * CLOCK_MONOTONIC), starting wd's thread on first use. A deadline of 0 or
 * less arms nothing; one already past sets *expired at once. Returns
 * KEMU_OK, or an error when the thread cannot be started. */
kemu_status exec_watchdog_arm(exec_watchdog *wd, exec_watchdog_timer *t, double deadline, int *expired,
                              kemu_error *err);
/* Arms t as exec_watchdog_arm does, and also to call tick(ctx) every
 * `period` seconds (period 0: never) until it is disarmed. */
kemu_status exec_watchdog_arm_ticking(exec_watchdog *wd, exec_watchdog_timer *t, double deadline, int *expired,
                                      double period, void (*tick)(void *ctx), void *ctx, kemu_error *err);
/* Disarms t (armed or not) before the launch that owns it returns; a tick
 * under way has finished when it returns. */
void exec_watchdog_disarm(exec_watchdog *wd, exec_watchdog_timer *t);

#endif
