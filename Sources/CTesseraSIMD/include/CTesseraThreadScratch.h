#ifndef CTESSERA_THREAD_SCRATCH_H
#define CTESSERA_THREAD_SCRATCH_H

/// Per-thread scratch blocks for kernel loop bodies: each thread keeps
/// TESSERA_THREAD_SCRATCH_SLOTS blocks, 64-byte aligned, that grow to the largest request and
/// are freed when the thread exits.

/// Blocks a thread holds at once (a body that needs two takes both).
#define TESSERA_THREAD_SCRATCH_SLOTS 2

/// This thread's first free block of at least `bytes` bytes (its contents undefined), marked
/// busy until tessera_thread_scratch_release; NULL when every block is busy, `bytes` is not
/// positive, or the allocation fails (the caller then takes memory elsewhere).
void *tessera_thread_scratch_acquire(long bytes);

/// Marks the block tessera_thread_scratch_acquire returned on this thread free again.
void tessera_thread_scratch_release(void *block);

/// The bytes this thread's scratch blocks take (for tests).
long tessera_thread_scratch_bytes(void);

#endif
