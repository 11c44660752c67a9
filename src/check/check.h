/* The checkers (memcheck, racecheck, initcheck, synccheck): observers of
 * the interpreter through the hook table of src/vm/hooks.h. They record
 * findings and sort them deterministically; they never change execution.
 * This header is what the launch layer (src/exec/) calls. */
#ifndef KEMU_CHECK_H
#define KEMU_CHECK_H

#include "kemu/kemu.h"
#include "mem/mem.h"
#include "util.h"
#include "vm/vm.h"

typedef struct check_session check_session;

/* A session for a device's tool configuration; NULL when out of memory. */
check_session *check_session_create(const kemu_check_config *cfg);
void check_session_destroy(check_session *s);
/* The KEMU_TOOL_* flags the session runs. */
unsigned check_session_tools(const check_session *s);
/* The mapped granule of the tools (bytes), or 0: without memcheck, a
 * global access past an allocation but inside its size rounded up to this
 * goes on as on a GPU. The device's allocator keeps that range free of
 * other allocations (mem_space.granule), so such an access, however far
 * it goes inside the granule, never lands in another allocation. */
uint64_t check_mapped_granule(unsigned tools);

/* Around each launch: returns the hooks to install in L (NULL when no
 * enabled tool needs them; tools that only look at faults are installed
 * as L->fault_hooks instead). `fault` is the fault the launch stopped
 * with, or NULL. */
const vm_hooks *check_launch_begin(check_session *s, vm_launch *L);
void check_launch_end(check_session *s, vm_launch *L, const vm_fault *fault);
/* What the session has found so far, and forgetting what came after: a
 * launch the debugger abandons to run it again (going back inside it)
 * leaves no findings and no device-heap records of its own. */
typedef struct check_mark {
    size_t nfindings;
    uint32_t heap_launch;
} check_mark;
check_mark check_mark_now(check_session *s);
void check_rollback(check_session *s, check_mark m);

/* Host-side memory errors and leaks (memcheck). */
void check_note_invalid_free(check_session *s, uint64_t address, const char *api);
void check_note_leaks(check_session *s, const mem_space *mem);

/* Host-side memory events, called by the device layer before a free (valid
 * or not: memcheck reports invalid and double frees), after an allocation,
 * and after a host copy or memset into device memory (initcheck marks the
 * bytes written). mem is the device's allocation table. */
void check_note_free(check_session *s, const mem_space *mem, uint64_t address, const char *api);
void check_note_alloc(check_session *s, const mem_space *mem, uint64_t address);
void check_note_host_write(check_session *s, const mem_space *mem, uint64_t address, uint64_t size);
/* Host-side code (a library call) reads device memory in place, height rows
 * of width bytes pitch apart: initcheck reports the bytes never written in
 * one finding naming `who`. */
void check_note_host_read(check_session *s, const mem_space *mem, uint64_t address, uint64_t width, uint64_t height,
                          uint64_t pitch, const char *who);

/* The number of findings recorded so far (changes when a launch or a
 * host-side event adds some). */
size_t check_session_count(check_session *s);

/* Renders the accumulated findings (see kemu_check_results). */
/* Findings (groups) the checkers created on the calling host thread so
 * far, and the tool and severity of the latest: a debugger compares the
 * count around a hook to stop at a new finding. */
uint64_t check_new_findings(int *tool, int *severity);

/* Dynamic parallelism under racecheck (race_cdp.c). check_cdp_begin, for
 * a grid that may launch grids, wraps L->hooks (after check_launch_begin)
 * to record its global accesses; NULL when racecheck is off. A device
 * launch by lane `lane` of warp w takes a mark; once the child's subtree
 * ran, check_cdp_child_done reports its conflicts with the parent's
 * accesses the mark does not order, and keeps the child's accesses (child
 * may be NULL) as the parent's descendants'. parent: the launching grid's
 * (NULL for a host launch); [skip_base, +skip_size): the parameter
 * buffers of device launches, whose accesses are not recorded. A child's
 * record must be freed before its parent's. */
typedef struct check_cdp check_cdp;
check_cdp *check_cdp_begin(check_session *s, vm_launch *L, check_cdp *parent, uint64_t skip_base,
                           uint64_t skip_size);
void check_cdp_mark(check_cdp *c, const vm_block *b, const vm_warp *w, int lane, uint64_t mark[4]);
void check_cdp_child_done(check_cdp *c, const uint64_t mark[4], check_cdp *child, const char *child_kernel);
void check_cdp_free(check_cdp *c);

/* racecheck across the operations of streams and devices (race_stream.c):
 * the runtime names each stream (key: unique among live streams; the
 * device; legacy, blocking or non-blocking; a name for reports) and tells
 * which operations it issues, records and waits on. An operation begins on
 * a stream (in session s, whose device's memory table is mem; host_waits:
 * the host thread waits for it, as for a synchronous copy), collects its
 * accesses (check_order_access for copies and sets; a launch's global
 * accesses at check_launch_end) and ends; conflicts with operations it is
 * not ordered after are racecheck errors of s. Every call ends the calling
 * thread's pending operation first. All are no-ops without racecheck. */
enum { CHECK_STREAM_LEGACY = 0, CHECK_STREAM_BLOCKING = 1, CHECK_STREAM_NONBLOCKING = 2 };
typedef struct check_stream {
    uint64_t key;
    int device, kind;
    const char *name;        /* "stream 0x1234 of device 0" */
} check_stream;
void check_order_begin(check_session *s, const mem_space *mem, int device, const check_stream *stream,
                       const char *what, int host_waits);
void check_order_access(uint64_t address, uint64_t size, int write);
void check_order_end(void);
int check_order_pending(void);
/* The host waits for the pending operation after all (a copy into
 * pageable host memory returns once it is done). */
void check_order_host_waits(void);
/* The pending operation's accesses to [address, +size) are the runtime's
 * own (the parameter buffers of device launches): not compared. */
void check_order_ignore(uint64_t address, uint64_t size);
/* The pending operation is also one of `other` (ordered after its work,
 * and its later work after it): a copy of a device's legacy stream that
 * touches another device's memory is serialized with that device's
 * legacy stream too, as CUDA serializes cudaMemcpyPeer. Whether the
 * pending operation is of a legacy stream. */
void check_order_also(const check_stream *other);
int check_order_pending_legacy(void);
/* New memory at [address, +size) (an allocation, a pool's block reused):
 * what earlier operations did there is forgotten. */
void check_order_forget_range(uint64_t address, uint64_t size);
void check_order_forget_stream(uint64_t key);
/* cudaEventRecord, cudaStreamWaitEvent, cudaEventSynchronize, destroy. */
void check_order_event_record(uint64_t event, const check_stream *stream);
void check_order_event_wait(const check_stream *stream, uint64_t event);
void check_order_event_sync(uint64_t event);
void check_order_forget_event(uint64_t event);
/* The host waits for a stream (cudaStreamSynchronize) or every stream of
 * a device (cudaDeviceSynchronize). */
void check_order_stream_sync(const check_stream *stream);
void check_order_device_sync(int device);
/* A collective: each party's stream is after every party's work before it. */
void check_order_join(const check_stream *streams, int n);
/* A session goes (its device is reset): its operations are forgotten. */
void check_order_forget_session(check_session *s);
/* Operations kept (not yet ordered before every stream and the host). */
size_t check_order_kept(void);

void check_session_report(check_session *s, int print_limit, util_buffer *text, util_buffer *json, size_t *errors,
                          size_t *warnings);

#endif
