"""Loads Tessera's C ABI (``libTesseraCoreMLC.so``) with ctypes and declares its functions.

Every call goes through :class:`ctypes.CDLL`, which releases the GIL for the whole of the
foreign call: a prediction runs without holding the interpreter lock, so Python threads
(and Ray / MLServer workers) predict in parallel.

The library is looked up in this order:

1. ``$TESSERA_LIBRARY`` (a path to the ``.so``), for development builds;
2. ``tessera/_lib/libTesseraCoreMLC.so`` inside the installed package (a wheel also
   carries the Swift runtime and OpenBLAS there, found through the library's
   ``$ORIGIN`` rpath).
"""

from __future__ import annotations

import ctypes
import os
import threading

ABI_VERSION = 1

_c_int32_p = ctypes.POINTER(ctypes.c_int32)
_c_int64_p = ctypes.POINTER(ctypes.c_int64)
_c_double_p = ctypes.POINTER(ctypes.c_double)
_c_char_pp = ctypes.POINTER(ctypes.c_char_p)

_lock = threading.Lock()
_library = None


def _package_lib_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib")


def library_path() -> str:
    """The path of the C ABI library this process loads (or would load)."""
    override = os.environ.get("TESSERA_LIBRARY")
    if override:
        return override
    return os.path.join(_package_lib_dir(), "libTesseraCoreMLC.so")


def load():
    """The loaded library, declared; loads it on first use.

    Raises ``ImportError`` when the library is missing or of another ABI version.
    """
    global _library
    if _library is not None:
        return _library
    with _lock:
        if _library is not None:
            return _library
        path = library_path()
        if not os.path.exists(path):
            raise ImportError(
                f"Tessera's native library is missing at {path}; build it with `make python` "
                "(or set TESSERA_LIBRARY to a libTesseraCoreMLC.so)"
            )
        directory = os.path.dirname(os.path.abspath(path))
        # Tessera dlopens "libopenblas.so.0" by name. A wheel carries one (and its Fortran
        # runtime); loading them first, globally, makes that dlopen find them even where the
        # system has no OpenBLAS.
        names = sorted(os.listdir(directory))
        for prefix in ("libquadmath", "libgfortran", "libopenblas"):
            for name in names:
                if name.startswith(prefix) and ".so" in name:
                    ctypes.CDLL(os.path.join(directory, name), mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(path)
        _declare(lib)
        version = lib.tessera_abi_version()
        if version != ABI_VERSION:
            raise ImportError(f"{path} has C ABI version {version}; this package needs {ABI_VERSION}")
        _library = lib
        return lib


def _declare(lib) -> None:
    vp = ctypes.c_void_p
    err = [_c_int32_p, ctypes.POINTER(ctypes.c_void_p)]
    signatures = {
        "tessera_abi_version": (ctypes.c_int32, []),
        "tessera_string_free": (None, [vp]),
        "tessera_model_load": (vp, [ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p] + err),
        "tessera_model_free": (None, [vp]),
        "tessera_model_description": (vp, [vp]),
        "tessera_compile_model": (vp, [ctypes.c_char_p] + err),
        "tessera_model_predict": (
            vp,
            [
                vp,  # model
                vp,  # state
                ctypes.c_int32,  # item count
                ctypes.c_int32,  # feature count
                vp,  # items (int32)
                vp,  # names (char **)
                vp,  # kinds (int32)
                vp,  # data types (int32)
                vp,  # ranks (int32)
                vp,  # shapes (int64)
                vp,  # strides (int64)
                vp,  # data (void **)
                vp,  # integers (int64)
                vp,  # doubles
            ]
            + err,
        ),
        "tessera_result_feature_count": (ctypes.c_int32, [vp, ctypes.c_int32, _c_int32_p]),
        "tessera_result_feature": (
            ctypes.c_int32,
            [
                vp,
                ctypes.c_int32,
                ctypes.c_int32,
                ctypes.POINTER(ctypes.c_char_p),
                _c_int32_p,
                _c_int32_p,
                _c_int32_p,
                ctypes.POINTER(_c_int64_p),
                _c_int64_p,
                _c_double_p,
                ctypes.POINTER(ctypes.c_char_p),
            ],
        ),
        "tessera_result_describe": (ctypes.c_ssize_t, [vp, ctypes.c_int32, vp, ctypes.c_ssize_t]),
        "tessera_result_copy_array": (ctypes.c_int32, [vp, ctypes.c_int32, ctypes.c_int32, vp, ctypes.c_size_t]),
        "tessera_result_free": (None, [vp]),
        "tessera_model_make_state": (vp, [vp]),
        "tessera_state_free": (None, [vp]),
        "tessera_state_copy": (ctypes.c_int32, [vp, ctypes.c_char_p, vp, ctypes.c_size_t, ctypes.c_int32]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def take_string(lib, pointer) -> str:
    """Decodes and frees a string the library returned."""
    if not pointer:
        return ""
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib.tessera_string_free(pointer)
