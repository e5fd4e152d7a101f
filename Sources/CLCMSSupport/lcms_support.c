#include "CLCMSSupport.h"

#include <lcms2_plugin.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Each block carries its size in a header, so a free or a realloc can give the bytes back to the
// budget; 16 bytes keep the payload as aligned as malloc's.
typedef struct {
    size_t size;
    size_t pad;
} block_header;

typedef struct {
    size_t limit;
    _Atomic size_t used;
    _Atomic size_t peak;
} budget;

// Little CMS makes the context itself through these functions with a temporary context whose
// user data it cannot find: such blocks are counted against no budget.
static budget *budget_of(cmsContext context) {
    return context ? (budget *)cmsGetContextUserData(context) : NULL;
}

static int take(budget *budget, size_t size) {
    if (!budget) return 1;
    size_t used = atomic_load(&budget->used);
    do {
        if (size > budget->limit || used > budget->limit - size) return 0;
    } while (!atomic_compare_exchange_weak(&budget->used, &used, used + size));
    size_t peak = atomic_load(&budget->peak);
    while (used + size > peak && !atomic_compare_exchange_weak(&budget->peak, &peak, used + size)) {}
    return 1;
}

static void give_back(budget *budget, size_t size) {
    if (budget) atomic_fetch_sub(&budget->used, size);
}

static void *counted_malloc(cmsContext context, cmsUInt32Number size) {
    budget *budget = budget_of(context);
    if (size == 0 || !take(budget, size)) return NULL;
    block_header *header = malloc(sizeof(block_header) + size);
    if (!header) {
        give_back(budget, size);
        return NULL;
    }
    header->size = size;
    return header + 1;
}

static void counted_free(cmsContext context, void *pointer) {
    if (!pointer) return;
    block_header *header = (block_header *)pointer - 1;
    give_back(budget_of(context), header->size);
    free(header);
}

static void *counted_realloc(cmsContext context, void *pointer, cmsUInt32Number size) {
    if (!pointer) return counted_malloc(context, size);
    block_header *header = (block_header *)pointer - 1;
    size_t old = header->size;
    budget *budget = budget_of(context);
    if (size > old && !take(budget, size - old)) return NULL;
    block_header *moved = realloc(header, sizeof(block_header) + size);
    if (!moved) {
        if (size > old) give_back(budget, size - old);
        return NULL;
    }
    if (size < old) give_back(budget, old - size);
    moved->size = size;
    return moved + 1;
}

static cmsPluginMemHandler memory_plugin = {
    .base = {.Magic = cmsPluginMagicNumber, .ExpectedVersion = 2060, .Type = cmsPluginMemHandlerSig, .Next = NULL},
    .MallocPtr = counted_malloc,
    .FreePtr = counted_free,
    .ReallocPtr = counted_realloc,
    // Little CMS builds zeroed, array and duplicate allocations on MallocPtr when these are NULL.
    .MallocZeroPtr = NULL,
    .CallocPtr = NULL,
    .DupPtr = NULL,
};

static void silent(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context;
    (void)code;
    (void)text;
}

cmsContext imago_lcms_context_create(size_t limit) {
    budget *budget = calloc(1, sizeof(*budget));
    if (!budget) return NULL;
    budget->limit = limit;
    cmsContext context = cmsCreateContext(&memory_plugin, budget);
    if (!context) {
        free(budget);
        return NULL;
    }
    cmsSetLogErrorHandlerTHR(context, silent);
    return context;
}

void imago_lcms_context_delete(cmsContext context) {
    if (!context) return;
    budget *budget = budget_of(context);
    cmsDeleteContext(context);
    free(budget);
}

size_t imago_lcms_context_peak(cmsContext context) {
    budget *budget = budget_of(context);
    return budget ? atomic_load(&budget->peak) : 0;
}
