// libpng (Debian: libpng-dev), used through its "simplified" API (png_image_*), which reports
// errors as return values and messages instead of longjmp, so Swift can call it directly.
#ifndef TESSERA_CLIBPNG_SHIM_H
#define TESSERA_CLIBPNG_SHIM_H
#include <png.h>
#endif
