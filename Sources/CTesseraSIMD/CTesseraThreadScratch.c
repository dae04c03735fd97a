// Per-thread scratch blocks (see CTesseraThreadScratch.h). A loop body that takes its scratch from a
// shared pool may get the block another core has just written, and then every line it writes
// first has to be taken from that core's cache; a thread's own block stays in its own cache.
#include "CTesseraThreadScratch.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct {
    void *pointer;
    long bytes;
    int busy;
} tessera_scratch_slot;

static __thread tessera_scratch_slot tessera_scratch_slots[TESSERA_THREAD_SCRATCH_SLOTS];
static __thread int tessera_scratch_registered;
static pthread_key_t tessera_scratch_key;
static pthread_once_t tessera_scratch_once = PTHREAD_ONCE_INIT;

// Runs as the thread exits (its thread-local slots are still valid then).
static void tessera_scratch_free_slots(void *slots) {
    tessera_scratch_slot *s = (tessera_scratch_slot *)slots;
    for (int i = 0; i < TESSERA_THREAD_SCRATCH_SLOTS; i++) {
        free(s[i].pointer);
        s[i].pointer = NULL;
        s[i].bytes = 0;
    }
}

static void tessera_scratch_make_key(void) { pthread_key_create(&tessera_scratch_key, tessera_scratch_free_slots); }

void *tessera_thread_scratch_acquire(long bytes) {
    if (bytes <= 0) return NULL;
    for (int i = 0; i < TESSERA_THREAD_SCRATCH_SLOTS; i++) {
        tessera_scratch_slot *slot = &tessera_scratch_slots[i];
        if (slot->busy) continue;
        if (slot->bytes < bytes) {
            if (!tessera_scratch_registered) {
                pthread_once(&tessera_scratch_once, tessera_scratch_make_key);
                if (pthread_setspecific(tessera_scratch_key, tessera_scratch_slots) != 0) return NULL;
                tessera_scratch_registered = 1;
            }
            // Whole pages, so a block that grows a little does not reallocate each time.
            long rounded = (bytes + 4095) / 4096 * 4096;
            void *block = NULL;
            if (posix_memalign(&block, 64, (size_t)rounded) != 0) return NULL;
            free(slot->pointer);
            slot->pointer = block;
            slot->bytes = rounded;
        }
        slot->busy = 1;
        return slot->pointer;
    }
    return NULL;
}

void tessera_thread_scratch_release(void *block) {
    for (int i = 0; i < TESSERA_THREAD_SCRATCH_SLOTS; i++)
        if (tessera_scratch_slots[i].pointer == block) tessera_scratch_slots[i].busy = 0;
}

long tessera_thread_scratch_bytes(void) {
    long total = 0;
    for (int i = 0; i < TESSERA_THREAD_SCRATCH_SLOTS; i++) total += tessera_scratch_slots[i].bytes;
    return total;
}
