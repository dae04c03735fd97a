// The CBLAS interface of OpenBLAS (Debian: libopenblas-dev). Tessera does not link OpenBLAS at
// build time: it loads the library at run time (see OpenBLASLibrary.swift), so that it can
// choose OpenBLAS's thread count and CPU kernels, which OpenBLAS reads only when it loads.
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
#endif
