/* CUDA graphs inside kemu's libcudart replacement: the graph, node and
 * executable-graph records shared by graph.c (building and inspecting
 * graphs), graph_exec.c (instantiating, updating and launching them) and
 * capture.c (stream capture builds graphs through the same calls). All of
 * it is guarded by the runtime lock. */
#ifndef KEMU_CUDART_GRAPH_H
#define KEMU_CUDART_GRAPH_H

#include "cudart/runtime.h"

/* A kernel launch as a node keeps it: the call, and its own copy of the
 * argument values (cudaKernelNodeParams.kernelParams points into it). */
typedef struct cudart_kernel_call {
    struct cudaKernelNodeParams params;
    unsigned cluster[3]; /* all 0: none */
    int cooperative;
} cudart_kernel_call;

/* A conditional handle (graph_cond.c). The handle a program sees is the
 * device address of the condition's value (4 bytes of device memory that
 * cudaGraphSetConditional in device code stores to). */
typedef struct cudart_cond_handle {
    unsigned long long address;    /* the handle; 0 once cudaDeviceReset freed its memory */
    unsigned default_value;
    unsigned flags;                /* cudaGraphCondAssignDefault */
    unsigned long long graph_id;   /* the graph it was made for (CUgraph_st.id) */
    unsigned refs;                 /* that graph's, and one per conditional node using it */
    kemu_device *device;           /* the emulated device its memory is on */
} cudart_cond_handle;

struct CUgraphNode_st {
    unsigned magic;
    struct CUgraph_st *graph;
    int type;                      /* enum cudaGraphNodeType */
    unsigned long long seq;        /* creation order in its graph */
    struct CUgraphNode_st **deps;  /* incoming edges, in the order added */
    size_t ndeps, capdeps;
    struct CUgraphNode_st *origin; /* the node this one was cloned from */
    struct CUgraphNode_st *paired; /* exec nodes: the node of the graph last given to cudaGraphExecUpdate */
    int disabled;                  /* cudaGraphNodeSetEnabled(0) on an exec node */
    union {
        struct {
            cudart_kernel_record *kr;
            cudart_kernel_call call;
            void **args;          /* nargs pointers into bytes */
            unsigned char *bytes; /* the argument values */
            int nargs;
        } kernel;
        struct cudaMemcpy3DParms memcpy;
        struct cudaMemsetParams memset;
        struct cudaHostNodeParams host;
        cudaEvent_t event;
        struct CUgraph_st *child; /* owned: a clone of the graph given */
        struct {
            void *dptr;
            size_t bytesize;
            struct cudaMemPoolProps props;
        } alloc;
        void *free_ptr;
        struct {
            cudart_cond_handle *handle;   /* a reference held */
            int type;                     /* enum cudaGraphConditionalNodeType */
            unsigned size;
            struct CUgraph_st **bodies;   /* size body graphs, owned (phGraph_out) */
        } cond;
    } u;
};

/* References a graph holds on a user object (cudaGraphRetainUserObject). */
typedef struct cudart_user_ref {
    cudaUserObject_t object;
    unsigned count;
} cudart_user_ref;

struct CUgraph_st {
    unsigned magic;
    unsigned long long id;     /* for DOT names */
    cudart_user_ref *user_refs; /* held by this graph, its clones and executable graphs alike */
    size_t nuser_refs;
    struct CUgraphNode_st **nodes; /* creation order */
    size_t nnodes, capnodes;
    unsigned long long next_seq;
    int is_child;              /* owned by a child-graph or conditional node */
    struct CUgraphNode_st *parent; /* a conditional node's body: that node */
    cudart_cond_handle **handles;  /* the conditional handles made for this graph (references held) */
    size_t nhandles;
};

struct CUgraphExec_st {
    unsigned magic;
    struct CUgraph_st *graph;  /* a private clone of the graph instantiated */
    unsigned long long flags;
    unsigned long long source_id; /* the id of the graph instantiated */
    int conditional;           /* it has conditional nodes: the only instantiation of its graph */
};

#define GRAPH_MAGIC 0x67726170u /* "grap" */
#define NODE_MAGIC 0x6e6f6465u  /* "node" */
#define EXEC_MAGIC 0x65786563u  /* "exec" */

/* The live record of a handle, or NULL. Locked. */
struct CUgraph_st *cudart_graph_of(cudaGraph_t g);
struct CUgraphNode_st *cudart_node_of(cudaGraphNode_t n);

/* Creates an empty graph (registered as live). Locked. */
cudaError_t cudart_graph_new(struct CUgraph_st **out);
/* Destroys a graph with its nodes (child graphs included). Locked. */
void cudart_graph_free(struct CUgraph_st *g);

/* Adds a node of `type` to g after deps. params by type: kernel: const
 * cudart_kernel_call * (arguments copied now); memcpy: const struct
 * cudaMemcpy3DParms *; memset: const struct cudaMemsetParams *; host:
 * const struct cudaHostNodeParams *; empty: NULL; event record / wait:
 * const cudaEvent_t *; child graph: const cudaGraph_t * (cloned now);
 * mem alloc: struct cudaMemAllocNodeParams * (dptr filled in); mem free:
 * void *const *. Returns the CUDA error of invalid parameters. Locked. */
cudaError_t cudart_graph_add_node(struct CUgraph_st *g, int type, const void *params, cudaGraphNode_t const *deps,
                                  size_t ndeps, struct CUgraphNode_st **out);
/* Adds the edge dep -> n; removes a node with its edges and frees it. */
cudaError_t cudart_graph_node_add_dep(struct CUgraphNode_st *n, struct CUgraphNode_st *dep);
void cudart_graph_node_destroy(struct CUgraphNode_st *n);
/* Replaces a node's parameters (same type; as for cudart_graph_add_node). */
cudaError_t cudart_graph_node_set(struct CUgraphNode_st *n, const void *params);
/* A deep copy of g whose nodes remember their originals. Locked. */
cudaError_t cudart_graph_clone(const struct CUgraph_st *g, struct CUgraph_st **out);
/* g's nodes in a dependency-respecting order, ready nodes taken in creation
 * order; *out is malloc'ed. cudaErrorInvalidValue on a cycle. Locked. */
cudaError_t cudart_graph_order(const struct CUgraph_st *g, struct CUgraphNode_st ***out);

/* Set while a graph launch runs its nodes on this thread: the API calls it
 * makes are not captured (graph_exec.c). */
extern _Thread_local int cudart_capture_bypass;

/* The API calls that graph launches make (defined in memory.c, array.c,
 * stream.c). */
CUDART_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, cudaStream_t stream);
CUDART_API cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream);
CUDART_API cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height,
                                         cudaStream_t stream);
CUDART_API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
CUDART_API cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
CUDART_API cudaError_t cudaGetSymbolAddress(void **device_ptr, const void *symbol);
CUDART_API cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol);

/* The 3D parameters of a 1D copy of count bytes, and of a copy to
 * (to_symbol) or from a __device__ / __constant__ variable at offset. */
struct cudaMemcpy3DParms cudart_copy_1d(void *dst, const void *src, size_t count, int kind);
cudaError_t cudart_symbol_copy_params(const void *symbol, void *host, size_t count, size_t offset, int kind,
                                      int to_symbol, struct cudaMemcpy3DParms *out);

/* Whether n edges' data (may be NULL) are all the default, the only kind
 * kemu supports. */
static inline int cudart_default_edges(const cudaGraphEdgeData *edges, size_t n)
{
    for (size_t i = 0; edges && i < n; i++)
        if (edges[i].from_port || edges[i].to_port || edges[i].type)
            return 0;
    return 1;
}

/* Takes or drops `count` references on a user object (user_object.c); the
 * last one calls its destructor. Locked. */
void cudart_user_object_retain(cudaUserObject_t object, unsigned count);
void cudart_user_object_release(cudaUserObject_t object, unsigned count);

/* Runs graph g's nodes in order on the device (graph_exec.c). Locked. */
cudaError_t cudart_graph_run(struct CUgraph_st *g);

/* ---- conditional nodes (graph_cond.c) ---- */

/* The record of a live handle, or NULL. Locked. */
cudart_cond_handle *cudart_cond_handle_of(unsigned long long handle);
/* Takes or drops a reference; the last one frees the handle's memory. */
void cudart_cond_retain(cudart_cond_handle *h);
void cudart_cond_release(cudart_cond_handle *h);
/* Sets up a new conditional node n (in its graph, not yet added) from
 * *params: checks them as CUDA does, makes its empty body graphs and points
 * params->phGraph_out at them. Locked. */
cudaError_t cudart_cond_node_init(struct CUgraphNode_st *n, struct cudaConditionalNodeParams *params);
/* Whether g or a graph inside it (bodies, child graphs) has a conditional node. */
int cudart_graph_has_conditional(const struct CUgraph_st *g);
/* What cudaGraphInstantiate checks in a graph with conditional nodes: every
 * handle made for g or its bodies is used by a conditional node
 * (else cudaGraphInstantiateConditionalHandleUnused), and bodies hold only
 * kernel, empty, child-graph, memcpy, memset and conditional nodes (else
 * cudaGraphInstantiateNodeOperationNotSupported, *bad the node). On
 * failure: cudaErrorInvalidValue and *result says why. Locked. */
cudaError_t cudart_cond_check(const struct CUgraph_st *g, int *result, struct CUgraphNode_st **bad);
/* Gives every handle used in g (bodies included) that has
 * cudaGraphCondAssignDefault its default value: the start of a launch. */
void cudart_cond_assign_defaults(const struct CUgraph_st *g);
/* Runs a conditional node: its body by the condition's value now (if,
 * if/else, switch), or again and again while the value is not 0 (while). */
cudaError_t cudart_cond_run(struct CUgraphNode_st *n);

#endif /* KEMU_CUDART_GRAPH_H */
