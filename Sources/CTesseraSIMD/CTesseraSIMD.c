// The functions of this target are `static inline` in the header; this file exists because a
// C target needs one source file.
#include "CTesseraSIMD.h"
