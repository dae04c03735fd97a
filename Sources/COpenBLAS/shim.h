// The CBLAS interface of OpenBLAS (Debian: libopenblas-dev), plus its thread-count controls
// (`openblas_set_num_threads`, `openblas_get_num_threads`), which <cblas.h> declares.
#ifndef TESSERA_COPENBLAS_SHIM_H
#define TESSERA_COPENBLAS_SHIM_H
#include <cblas.h>
#endif
