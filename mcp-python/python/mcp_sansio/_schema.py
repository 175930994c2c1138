"""JSON Schemas for tool arguments, from a function's signature and type hints."""

import inspect
import typing
from typing import Any, Callable, Dict, Optional, Tuple

_SIMPLE = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    bytes: {"type": "string"},
    type(None): {"type": "null"},
    dict: {"type": "object"},
    list: {"type": "array"},
    Any: {},
}


def type_schema(hint: Any) -> Dict[str, Any]:
    """The JSON Schema of one type hint (plain types, Optional/Union, list[...], dict[...],
    Literal[...]); anything else accepts any value."""
    if hint in _SIMPLE:
        return dict(_SIMPLE[hint])
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType"):
        return {"anyOf": [type_schema(a) for a in args]}
    if origin in (list, tuple, set, frozenset):
        schema: Dict[str, Any] = {"type": "array"}
        if args and args[0] is not Ellipsis:
            schema["items"] = type_schema(args[0])
        return schema
    if origin is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    if origin is typing.Literal:
        return {"enum": list(args)}
    return {}


def is_context(name: str, hint: Any, context_type: type) -> bool:
    """Whether a parameter receives the handler's ``Context``."""
    return hint is context_type or (hint is inspect.Parameter.empty and name == "ctx")


def signature_schema(
    fn: Callable[..., Any], context_type: type, skip: Tuple[str, ...] = ()
) -> Tuple[Dict[str, Any], Optional[str]]:
    """The input schema of a handler, and the name of its context parameter if it has one."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations: fall back to no types
        hints = {}
    properties: Dict[str, Any] = {}
    required = []
    context_param = None
    for name, param in inspect.signature(fn).parameters.items():
        hint = hints.get(name, param.annotation)
        if is_context(name, hint, context_type):
            context_param = name
            continue
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = type_schema(hint) if hint is not inspect.Parameter.empty else {}
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is None or isinstance(param.default, (str, int, float, bool)):
            schema["default"] = param.default
        properties[name] = schema
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, context_param


def context_param(fn: Callable[..., Any], context_type: type) -> Optional[str]:
    """The name of a handler's context parameter, if it has one."""
    return signature_schema(fn, context_type)[1]
