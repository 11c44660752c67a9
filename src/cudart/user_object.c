/* User objects of kemu's libcudart replacement: reference-counted host
 * resources whose destructor runs when the last reference goes, and the
 * references graphs hold on them (cudaGraphRetainUserObject). A graph's
 * references are held by its clones and executable graphs too, as in
 * CUDA, so a resource a graph needs lives as long as anything can launch
 * it. kemu runs the destructor at once, on the thread that drops the last
 * reference (CUDA runs it later, on a thread of its own; it may not call
 * the CUDA API in either case). */
#include "config.h"
#include "cudart/graph.h"

#include <stdlib.h>
#include <string.h>

#define USER_OBJECT_MAGIC 0x7573726fu /* "usro" */

struct CUuserObject_st {
    unsigned magic;
    void *ptr;
    cudaHostFn_t destroy;
    unsigned long long refs;
};

static cudart_ptrmap user_objects; /* live objects */

static struct CUuserObject_st *user_object_of(cudaUserObject_t object)
{
    return object && cudart_ptrmap_get(&user_objects, object) ? object : NULL;
}

void cudart_user_object_retain(cudaUserObject_t object, unsigned count)
{
    object->refs += count;
}

void cudart_user_object_release(cudaUserObject_t object, unsigned count)
{
    object->refs = object->refs > count ? object->refs - count : 0;
    if (object->refs)
        return;
    cudart_ptrmap_remove(&user_objects, object);
    if (object->destroy)
        object->destroy(object->ptr);
    object->magic = 0;
    free(object);
}

CUDART_API cudaError_t cudaUserObjectCreate(cudaUserObject_t *object, void *ptr, cudaHostFn_t destroy,
                                            unsigned int initial_refs, unsigned int flags)
{
    if (!object || !destroy || !initial_refs || flags != CUDART_USER_OBJECT_NO_DESTRUCTOR_SYNC)
        return cudart_result(cudaErrorInvalidValue);
    struct CUuserObject_st *o = calloc(1, sizeof *o);
    if (!o)
        return cudart_result(cudaErrorMemoryAllocation);
    o->magic = USER_OBJECT_MAGIC;
    o->ptr = ptr;
    o->destroy = destroy;
    o->refs = initial_refs;
    cudart_lock();
    cudaError_t e = cudart_ptrmap_put(&user_objects, o, o) ? cudaErrorMemoryAllocation : cudaSuccess;
    cudart_unlock();
    if (e) {
        free(o);
        return cudart_result(e);
    }
    *object = o;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count)
{
    cudart_lock();
    struct CUuserObject_st *o = count ? user_object_of(object) : NULL;
    if (o)
        cudart_user_object_retain(o, count);
    cudart_unlock();
    return cudart_result(o ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count)
{
    cudart_lock();
    struct CUuserObject_st *o = count ? user_object_of(object) : NULL;
    if (o)
        cudart_user_object_release(o, count);
    cudart_unlock();
    return cudart_result(o ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                                 unsigned int flags)
{
    if (!count || (flags & ~CUDART_GRAPH_USER_OBJECT_MOVE))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    struct CUuserObject_st *o = user_object_of(object);
    cudaError_t e = g && o ? cudaSuccess : cudaErrorInvalidValue;
    size_t i = 0;
    while (!e && i < g->nuser_refs && g->user_refs[i].object != o)
        i++;
    if (!e && i == g->nuser_refs) {
        cudart_user_ref *grown = realloc(g->user_refs, (g->nuser_refs + 1) * sizeof *grown);
        if (!grown) {
            e = cudaErrorMemoryAllocation;
        } else {
            g->user_refs = grown;
            g->user_refs[g->nuser_refs++] = (cudart_user_ref){o, 0};
        }
    }
    if (!e) {
        g->user_refs[i].count += count;
        if (!(flags & CUDART_GRAPH_USER_OBJECT_MOVE)) /* a move hands over the caller's references */
            cudart_user_object_retain(o, count);
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count)
{
    if (!count)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    cudaError_t e = cudaErrorInvalidValue;
    for (size_t i = 0; g && i < g->nuser_refs; i++)
        if (g->user_refs[i].object == object) {
            if (count > g->user_refs[i].count)
                break;
            g->user_refs[i].count -= count;
            if (!g->user_refs[i].count)
                g->user_refs[i] = g->user_refs[--g->nuser_refs];
            cudart_user_object_release(object, count);
            e = cudaSuccess;
            break;
        }
    cudart_unlock();
    return cudart_result(e);
}
