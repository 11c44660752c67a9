/* The launch watchdog: a host thread that sleeps until a launch's
 * deadline and then sets the launch's `expired` flag. The interpreter and
 * the block scheduler only read that flag (a relaxed load) at block starts,
 * back edges, indirect branches and calls, so --timeout costs the hot loop
 * no clock read. */
#ifndef KEMU_EXEC_WATCHDOG_H
#define KEMU_EXEC_WATCHDOG_H

#include <pthread.h>
#include <time.h>
#include "kemu/kemu.h"

typedef struct exec_watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct timespec deadline;  /* CLOCK_MONOTONIC */
    int *expired;              /* set to 1 (atomic) at the deadline */
    int stopping;
    int running;
} exec_watchdog;

/* Arms wd to set *expired at `deadline` (seconds on vm_now's clock,
 * CLOCK_MONOTONIC). A deadline of 0 or less arms nothing. Returns
 * KEMU_OK, or an error when the thread cannot be started. */
kemu_status exec_watchdog_start(exec_watchdog *wd, double deadline, int *expired, kemu_error *err);
/* Stops and joins the thread if one was started; wd may be started again. */
void exec_watchdog_stop(exec_watchdog *wd);

#endif
