// The CBLAS interface of OpenBLAS (Debian: libopenblas-dev). Tessera does not link OpenBLAS at
// build time: it loads the library at run time (see OpenBLASLibrary.swift), so that it can
// choose OpenBLAS's thread count and CPU kernels, which OpenBLAS reads only when it loads (or
// set them through these entry points when the process had loaded OpenBLAS already).
// This header supplies the types and the function-pointer types for the symbols it looks up.
#ifndef TESSERA_COPENBLAS_SHIM_H
#define TESSERA_COPENBLAS_SHIM_H
#include <cblas.h>

typedef void (*tessera_cblas_sgemm_fn)(
    enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint, float,
    const float *, blasint, const float *, blasint, float, float *, blasint);

typedef void (*tessera_cblas_dgemm_fn)(
    enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint, double,
    const double *, blasint, const double *, blasint, double, double *, blasint);

typedef char *(*tessera_openblas_get_corename_fn)(void);
typedef char *(*tessera_openblas_get_config_fn)(void);
typedef int (*tessera_openblas_get_num_threads_fn)(void);
typedef void (*tessera_openblas_set_num_threads_fn)(int);

// glibc's dlmopen, looked up with dlsym (its declaration needs _GNU_SOURCE, which the Glibc
// module is not built with): loads a library into a new link-map namespace when `lmid` is
// LM_ID_NEWLM (-1), so it initialises afresh even when the process already has a copy.
typedef void *(*tessera_dlmopen_fn)(long lmid, const char *file, int mode);

// glibc's dladdr and its Dl_info (also _GNU_SOURCE only), to find the file a loaded library
// came from.
typedef struct {
    const char *dli_fname;
    void *dli_fbase;
    const char *dli_sname;
    void *dli_saddr;
} tessera_dl_info;
typedef int (*tessera_dladdr_fn)(const void *address, tessera_dl_info *info);
#endif
