"""Plain-data wire format between the sandboxed child and the trusted parent.

Everything a case returns crosses the process boundary as JSON. NumPy arrays travel as
``{"__nd__": base64, "dtype": "<f4", "shape": [3, 4]}``, NumPy scalars as
``{"__np__": base64, "dtype": "<i8"}``, tuples as ``{"__tuple__": [...]}`` and mappings with
non-string keys as ``{"__map__": [[k, v], ...]}``. The same format stores goldens.

The decoder is the security boundary: whatever the child sends, :func:`decode` returns only
exact built-in types and plain ``numpy.ndarray`` / NumPy scalars of numeric, bool or string
dtypes, so no submission-defined ``__eq__`` or ``__float__`` ever reaches
:func:`autograder.suite.compare`. It never unpickles and refuses object dtypes.
"""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Any

import numpy as np

#: Dtypes that may cross the wire: what NumPy models and the course's probes use (bool, 8- to
#: 64-bit integers, float16/32/64, complex64/128) and str/bytes. Never float128 or complex256
#: (``<f16``, ``<c32``): an extended-precision array would double a "bytes stored" count, and
#: no model stores one.
_DTYPE_RE = re.compile(r"^[<>|=]?(?:b1|[iu][1248]|f[248]|c(?:8|16)|[US][0-9]{1,3})$")
MAX_DEPTH = 32
MAX_ITEMS = 1_000_000

_TYPE = type  # captured: submissions may rebind builtins in the child
_INT, _FLOAT, _STR, _BOOL = int, float, str, bool
_LIST, _TUPLE, _DICT = list, tuple, dict


class WireError(ValueError):
    """A value that is not plain data (child side) or a malformed message (parent side)."""


# ----------------------------------------------------------------------------- encode
def encode(value: Any, _depth: int = 0) -> Any:
    """Turn plain data into a JSON-able structure (child side).

    Raises:
        WireError: the value (or something inside it) is not plain data; the message names
            its type so the student learns what their code returned.
    """
    if _depth > MAX_DEPTH:
        raise WireError("the result is nested too deeply")
    t = _TYPE(value)
    if value is None or t is _BOOL or t is _STR:
        return value
    if t is _INT:
        return value
    if t is _FLOAT:
        return _float_out(value)
    if isinstance(value, np.ndarray):
        return _encode_array(value)
    if isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biufcUS" or not _DTYPE_RE.match(arr.dtype.str):
            raise WireError(f"a NumPy scalar of dtype {arr.dtype} is not plain data")
        return {"__np__": base64.b64encode(arr.tobytes()).decode("ascii"),
                "dtype": arr.dtype.str}
    if t is _TUPLE or t is _LIST:
        items = [encode(v, _depth + 1) for v in value]
        return {"__tuple__": items} if t is _TUPLE else items
    if t is _DICT:
        if all(_TYPE(k) is _STR for k in value) and not any(k.startswith("__") for k in value):
            return {k: encode(v, _depth + 1) for k, v in value.items()}
        return {"__map__": [[encode(k, _depth + 1), encode(v, _depth + 1)]
                            for k, v in value.items()]}
    # Subclasses of built-ins (an int whose __eq__ always says True, ...) are not plain data.
    raise WireError(f"got an object of type {t.__module__}.{t.__qualname__}, "
                    "which is not plain data (a number, string, tuple, list, dict or array)")


def _float_out(x: float) -> Any:
    if math.isfinite(x):
        return x
    return {"__float__": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def _encode_array(arr: np.ndarray) -> dict[str, Any]:
    base = np.ndarray.view(arr, np.ndarray)  # drop any subclass behaviour
    if base.dtype.kind not in "biufcUS" or not _DTYPE_RE.match(base.dtype.str):
        raise WireError(f"an array of dtype {base.dtype} is not plain data "
                        "(use bool, an integer, float16/32/64, complex or a string dtype)")
    data = np.ascontiguousarray(base)
    return {"__nd__": base64.b64encode(data.tobytes()).decode("ascii"),
            "dtype": data.dtype.str, "shape": list(data.shape)}


def dumps(value: Any) -> str:
    """``encode`` then JSON, one line."""
    return json.dumps(encode(value), separators=(",", ":"), allow_nan=False)


# ----------------------------------------------------------------------------- decode
def decode(obj: Any, _depth: int = 0) -> Any:
    """Rebuild plain data from its JSON form (parent side, untrusted input).

    Raises:
        WireError: the structure is not valid wire format (never anything else: a malformed
            message is the sender's failure, so callers need to catch this one type only).
    """
    if _depth:
        return _decode(obj, _depth)
    try:
        return _decode(obj, 0)
    except WireError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, OverflowError, RecursionError,
            MemoryError, AttributeError) as exc:
        raise WireError(f"malformed value ({type(exc).__name__})") from None


def _decode(obj: Any, _depth: int) -> Any:
    decode = _decode
    if _depth > MAX_DEPTH:
        raise WireError("result nested too deeply")
    t = _TYPE(obj)
    if obj is None or t in (_BOOL, _STR, _INT):
        return obj
    if t is _FLOAT:
        return obj
    if t is _LIST:
        return [decode(v, _depth + 1) for v in obj]
    if t is not _DICT:
        raise WireError(f"unexpected JSON value of type {t.__name__}")
    if "__nd__" in obj:
        return _decode_array(obj)
    if "__np__" in obj:
        dtype = _dtype(obj.get("dtype"))
        raw = _b64(obj["__np__"])
        if len(raw) != dtype.itemsize:
            raise WireError("scalar payload has the wrong size")
        return np.frombuffer(raw, dtype=dtype)[0].copy()
    if "__tuple__" in obj:
        items = obj["__tuple__"]
        if _TYPE(items) is not _LIST:
            raise WireError("bad tuple")
        return tuple(decode(v, _depth + 1) for v in items)
    if "__float__" in obj:
        special = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
        name = _str(obj["__float__"])
        if name not in special:
            raise WireError(f"unknown special float {name[:20]!r}")
        return special[name]
    if "__map__" in obj:
        pairs = obj["__map__"]
        if _TYPE(pairs) is not _LIST:
            raise WireError("bad mapping")
        out: dict[Any, Any] = {}
        for pair in pairs:
            if _TYPE(pair) is not _LIST or len(pair) != 2:
                raise WireError("bad mapping entry")
            key = decode(pair[0], _depth + 1)
            try:
                hash(key)
            except TypeError as exc:
                raise WireError("unhashable mapping key") from exc
            out[key] = decode(pair[1], _depth + 1)
        return out
    return {_str(k): decode(v, _depth + 1) for k, v in obj.items()}


def _str(x: Any) -> str:
    if _TYPE(x) is not _STR:
        raise WireError("expected a string")
    return x


def _b64(x: Any) -> bytes:
    try:
        return base64.b64decode(_str(x), validate=True)
    except (ValueError, TypeError) as exc:
        raise WireError("bad base64 payload") from exc


def _dtype(text: Any) -> np.dtype:
    if _TYPE(text) is not _STR or not _DTYPE_RE.match(text):
        raise WireError(f"dtype {text!r} is not allowed on the wire")
    try:
        return np.dtype(text)
    except TypeError as exc:
        raise WireError(f"unknown dtype {text!r}") from exc


def _decode_array(obj: dict[str, Any]) -> np.ndarray:
    dtype = _dtype(obj.get("dtype"))
    shape = obj.get("shape")
    if _TYPE(shape) is not _LIST or not all(_TYPE(d) is _INT and d >= 0 for d in shape):
        raise WireError("bad array shape")
    if len(shape) > 32:
        raise WireError("too many dimensions")
    raw = _b64(obj["__nd__"])
    count = math.prod(shape)
    if count > MAX_ITEMS * 64 or count * dtype.itemsize != len(raw):
        raise WireError("array payload does not match its shape and dtype")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def loads(text: str) -> Any:
    """JSON then :func:`decode`."""
    try:
        return decode(json.loads(text, parse_constant=_no_constants))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise WireError(f"not valid JSON: {exc}") from exc


def _no_constants(name: str) -> Any:
    raise WireError(f"JSON constant {name} is not allowed")
