"""JSON Schemas (2020-12) from type hints: tool arguments from a function's signature, output
schemas from a return annotation.

What each hint becomes (the form a user would write by hand):

- ``str``, ``int``, ``float``, ``bool``, ``None``: ``{"type": "string" | "integer" |
  "number" | "boolean" | "null"}``; ``Any`` or no annotation: ``{}`` (any value);
  ``datetime``, ``date``, ``UUID``: a string of ``"format": "date-time" | "date" | "uuid"``.
- ``Literal["a", "b"]`` and an ``Enum``: ``{"type": "string", "enum": ["a", "b"]}`` (the
  members' values; ``"type"`` when they share one JSON type). An ``Enum`` whose members have
  a ``title`` str attribute: ``{"type": "string", "oneOf": [{"const": v, "title": t}, ...]}``.
- ``Optional[X]`` / ``X | None`` / ``Union[X, Y]``: ``{"anyOf": [X, Y]}``.
- ``list[X]``, ``Sequence[X]``: ``{"type": "array", "items": X}``; ``set[X]`` adds
  ``"uniqueItems": true``; ``tuple[X, ...]`` is a list; ``tuple[X, Y]`` has ``prefixItems``
  and ``minItems``/``maxItems`` of its length.
- ``dict[str, X]``, ``Mapping[str, X]``: ``{"type": "object", "additionalProperties": X}``
  (no ``additionalProperties`` for ``Any``).
- a dataclass: ``{"type": "object", "properties": {field: X}, "required": [fields without a
  default]}``; a field's ``metadata={"description": ...}`` (or ``"title"``) and a simple
  default (str, int, float, bool, None) go into its schema.
- a ``TypedDict``: the same, ``required`` from its required keys (``total=False``,
  ``NotRequired``, ``Required``).
- a pydantic model (pydantic is never imported here): its ``model_json_schema()``, whose
  ``$defs`` move to the root of the schema it sits in.
- ``Annotated[X, "text"]``: X with ``"description": "text"``.

Nested models are inlined; a model that contains itself (directly or not) goes into ``$defs``
at the root, referenced by ``{"$ref": "#/$defs/Name"}``. Anything else accepts any value.
"""

import collections.abc as cabc
import dataclasses
import datetime
import enum
import inspect
import sys
import types
import typing
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._core import elicitation_form

_SIMPLE = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    bytes: {"type": "string"},
    type(None): {"type": "null"},
    None: {"type": "null"},
    dict: {"type": "object"},
    list: {"type": "array"},
    Any: {},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    uuid.UUID: {"type": "string", "format": "uuid"},
}
_SEQUENCES = {
    list,
    set,
    frozenset,
    tuple,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Set,
    cabc.MutableSet,
    cabc.Iterable,
}
_MAPPINGS = {
    dict,
    cabc.Mapping,
    cabc.MutableMapping,
}
_REQUIRED_MARKS = {"Required", "NotRequired", "ReadOnly"}


# --- kinds of hints ----------------------------------------------------------------------


def is_union(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin is typing.Union or origin is getattr(types, "UnionType", object())


def is_typeddict(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


def is_pydantic_model(hint: Any) -> bool:
    return isinstance(hint, type) and hasattr(hint, "model_json_schema") and hasattr(hint, "model_validate")


def is_dataclass_type(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def is_enum(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, enum.Enum)


def is_model(hint: Any) -> bool:
    """A dataclass, a TypedDict or a pydantic model."""
    return is_dataclass_type(hint) or is_typeddict(hint) or is_pydantic_model(hint)


def unwrap(hint: Any) -> Tuple[Any, Optional[str]]:
    """``Annotated[X, ...]`` and ``Required``/``NotRequired[X]`` as X, with the
    description a str in ``Annotated`` gives."""
    description = None
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            args = typing.get_args(hint)
            for meta in args[1:]:
                if isinstance(meta, str):
                    description = meta
            hint = args[0]
        elif origin is not None and getattr(origin, "_name", None) in _REQUIRED_MARKS:
            hint = typing.get_args(hint)[0]
        else:
            return hint, description


def model_hints(cls: type) -> Dict[str, Any]:
    """A model's field hints (``Annotated`` kept)."""
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # one does not resolve: resolve the others one by one
        pass
    module = sys.modules.get(cls.__module__)
    scope = dict(vars(module)) if module else {}
    hints = {}
    for klass in reversed(cls.__mro__):
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            if isinstance(annotation, str):
                try:
                    annotation = eval(annotation, scope, dict(vars(cls)))  # noqa: S307
                except Exception:
                    annotation = Any
            hints[name] = annotation
    return hints


def simple_default(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def model_fields(cls: type) -> List[Tuple[str, Any, bool, Dict[str, Any]]]:
    """The fields of a dataclass or TypedDict: (name, hint, required, extra schema keys)."""
    hints = model_hints(cls)
    out = []
    if is_dataclass_type(cls):
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            extra: Dict[str, Any] = {}
            for key in ("title", "description"):
                if isinstance(f.metadata.get(key), str):
                    extra[key] = f.metadata[key]
            has_default = f.default is not dataclasses.MISSING
            required = not has_default and f.default_factory is dataclasses.MISSING  # type: ignore[misc]
            value = f.default.value if isinstance(f.default, enum.Enum) else f.default
            if has_default and simple_default(value):
                extra["default"] = value
            out.append((f.name, hints.get(f.name, f.type), required, extra))
    else:  # TypedDict
        required_keys = getattr(cls, "__required_keys__", frozenset())
        for name, hint in hints.items():
            out.append((name, hint, name in required_keys, {}))
    return out


def enum_values(hint: Any) -> Optional[List[Any]]:
    """The JSON values of a ``Literal`` or an ``Enum``, else ``None``."""
    if typing.get_origin(hint) is typing.Literal:
        return [v.value if isinstance(v, enum.Enum) else v for v in typing.get_args(hint)]
    if is_enum(hint):
        return [m.value for m in hint]
    return None


def json_type(values: List[Any]) -> Optional[str]:
    """The one JSON type of every value, if they share one."""
    names = set()
    for v in values:
        if isinstance(v, bool):
            names.add("boolean")
        elif isinstance(v, int):
            names.add("integer")
        elif isinstance(v, float):
            names.add("number")
        elif isinstance(v, str):
            names.add("string")
        elif v is None:
            names.add("null")
        else:
            raise TypeError(f"enum value {v!r} is not a JSON value")
    if names == {"integer", "number"}:
        return "number"
    return names.pop() if len(names) == 1 else None


def enum_schema(hint: Any) -> Dict[str, Any]:
    values = enum_values(hint)
    assert values is not None
    schema: Dict[str, Any] = {}
    kind = json_type(values)
    if kind:
        schema["type"] = kind
    if is_enum(hint) and all(isinstance(getattr(m, "title", None), str) for m in hint):
        schema["oneOf"] = [{"const": m.value, "title": m.title} for m in hint]
    else:
        schema["enum"] = values
    return schema


# --- the builder ---------------------------------------------------------------------------


class SchemaBuilder:
    """Derives schemas for one root (a tool's input or output), collecting its ``$defs``."""

    def __init__(self, mode: str = "validation") -> None:
        self.mode = mode  # pydantic's: "validation" for arguments, "serialization" for results
        self.defs: Dict[str, Any] = {}
        self._stack: List[type] = []
        self._recursive: set = set()
        self._names: Dict[type, str] = {}

    def finish(self, schema: Dict[str, Any]) -> Dict[str, Any]:
        """``schema`` as a root: with the ``$defs`` collected, if any."""
        if self.defs:
            schema = dict(schema)
            schema["$defs"] = {**schema.get("$defs", {}), **self.defs}
        return schema

    def _name(self, cls: type) -> str:
        name = self._names.get(cls)
        if name is None:
            name = cls.__name__
            taken = set(self._names.values()) | set(self.defs)
            n = 2
            while name in taken:
                name, n = f"{cls.__name__}{n}", n + 1
            self._names[cls] = name
        return name

    def schema(self, hint: Any) -> Dict[str, Any]:
        """The schema of one hint."""
        hint, description = unwrap(hint)
        schema = self._schema(hint)
        if description:
            schema = {**schema, "description": description}
        return schema

    def _schema(self, hint: Any) -> Dict[str, Any]:
        if hint is inspect.Parameter.empty:
            return {}
        try:
            if hint in _SIMPLE:
                return dict(_SIMPLE[hint])
        except TypeError:  # unhashable hint
            return {}
        if enum_values(hint) is not None:
            try:
                return enum_schema(hint)
            except TypeError:  # values that are not JSON: any value, as before
                return {}
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if is_union(hint):
            return {"anyOf": [self.schema(a) for a in args]}
        if origin in _SEQUENCES:
            schema: Dict[str, Any] = {"type": "array"}
            if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
                if args == ((),):  # tuple[()]
                    return {"type": "array", "maxItems": 0}
                schema["prefixItems"] = [self.schema(a) for a in args]
                schema["minItems"] = schema["maxItems"] = len(args)
                return schema
            if args:
                items = self.schema(args[0])
                if items:
                    schema["items"] = items
            if origin in (set, frozenset) or getattr(origin, "__name__", "") in ("Set", "MutableSet"):
                schema["uniqueItems"] = True
            return schema
        if origin in _MAPPINGS:
            schema = {"type": "object"}
            if len(args) == 2:
                values = self.schema(args[1])
                if values:
                    schema["additionalProperties"] = values
            return schema
        if is_pydantic_model(hint):
            return self._pydantic(hint)
        if is_dataclass_type(hint) or is_typeddict(hint):
            return self._model(hint)
        return {}

    def _model(self, cls: type) -> Dict[str, Any]:
        name = self._name(cls)
        if cls in self._stack:  # it contains itself: a $ref, defined once it is done
            self._recursive.add(cls)
            return {"$ref": f"#/$defs/{name}"}
        if name in self.defs:
            return {"$ref": f"#/$defs/{name}"}
        self._stack.append(cls)
        try:
            properties: Dict[str, Any] = {}
            required = []
            for field, hint, is_required, extra in model_fields(cls):
                properties[field] = {**self.schema(hint), **extra}
                if is_required:
                    required.append(field)
        finally:
            self._stack.pop()
        schema: Dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if cls in self._recursive:
            self.defs[name] = schema
            return {"$ref": f"#/$defs/{name}"}
        return schema

    def _pydantic(self, cls: type) -> Dict[str, Any]:
        schema = dict(cls.model_json_schema(mode=self.mode))  # type: ignore[attr-defined]
        for key, value in schema.pop("$defs", {}).items():
            self.defs.setdefault(key, value)
        return schema


def type_schema(hint: Any) -> Dict[str, Any]:
    """The JSON Schema of one type hint, as a root (see the module's doc)."""
    builder = SchemaBuilder()
    return builder.finish(builder.schema(hint))


# --- tool signatures -----------------------------------------------------------------------


def is_context(name: str, hint: Any, context_type: type) -> bool:
    """Whether a parameter receives the handler's ``Context``."""
    return hint is context_type or (hint is inspect.Parameter.empty and name == "ctx")


def signature_hints(fn: Callable[..., Any]) -> Dict[str, Any]:
    """A function's type hints (``Annotated`` kept); under ``from __future__ import
    annotations`` one that does not resolve (a class local to a function) is left out, and
    its parameter accepts any value."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # one does not resolve: resolve the others one by one
        pass
    hints = {}
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, getattr(fn, "__globals__", {}))  # noqa: S307
            except Exception:
                continue
        hints[name] = annotation
    return hints


def signature_schema(
    fn: Callable[..., Any], context_type: type, skip: Tuple[str, ...] = ()
) -> Tuple[Dict[str, Any], Optional[str]]:
    """The input schema of a handler, and the name of its context parameter if it has one."""
    hints = signature_hints(fn)
    builder = SchemaBuilder()
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
        schema = builder.schema(hint)
        if param.default is inspect.Parameter.empty:
            required.append(name)
        else:
            value = param.default.value if isinstance(param.default, enum.Enum) else param.default
            if simple_default(value):
                schema["default"] = value
        properties[name] = schema
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return builder.finish(schema), context_param


def context_param(fn: Callable[..., Any], context_type: type) -> Optional[str]:
    """The name of a handler's context parameter, if it has one."""
    return signature_schema(fn, context_type)[1]


# --- output schemas ------------------------------------------------------------------------


def is_structured(hint: Any) -> bool:
    """Whether a return annotation gets an output schema: a model, or a parameterized
    container or a union with one in it (``dict[str, X]``, ``list[X]``, ...). Plain values
    (str, numbers, bool, None, Any, bare dict or list, ``dict[str, Any]``, ``list[dict]``,
    Literal, Enum) stay as before."""
    hint, _ = unwrap(hint)
    if is_model(hint):
        return True
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if is_union(hint):
        return any(is_structured(a) for a in args)
    if origin in _SEQUENCES or origin in _MAPPINGS:
        # dict[str, Any] and list[dict] stay as before: such a value may be a CallToolResult
        # or content blocks, and says nothing worth a schema
        items = [a for a in args[-1:] if a is not Ellipsis] if origin in _MAPPINGS else list(args[:1])
        if origin is tuple and len(args) >= 2 and args[1] is not Ellipsis:
            items = list(args)
        return bool(items) and all(unwrap(a)[0] not in (Any, dict, object) for a in items)
    return False


def output_schema(hint: Any) -> Tuple[Dict[str, Any], bool]:
    """The output schema of a return annotation, and whether a result is wrapped as
    ``{"result": value}`` (a schema that is not an object schema is wrapped: the 2025
    revisions require an object)."""
    builder = SchemaBuilder("serialization")
    schema = builder.schema(hint)
    if schema.get("type") == "object":
        return builder.finish(schema), False
    wrapper = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return builder.finish(wrapper), True


# --- elicitation ---------------------------------------------------------------------------


def elicitation_fields(cls: type) -> List[Tuple[str, Any, bool, Dict[str, Any]]]:
    """The fields of a model for an elicitation form: (name, hint, required, extra keys)."""
    if is_pydantic_model(cls):
        out = []
        for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
            extra: Dict[str, Any] = {}
            if info.title:
                extra["title"] = info.title
            if info.description:
                extra["description"] = info.description
            required = info.is_required()
            value = info.default.value if isinstance(info.default, enum.Enum) else info.default
            if not required and simple_default(value):
                extra["default"] = value
            out.append((info.alias or name, info.annotation, required, extra))
        return out
    if is_dataclass_type(cls) or is_typeddict(cls):
        return model_fields(cls)
    raise TypeError(
        f"an elicitation schema is a dataclass, a TypedDict, a pydantic model or a dict, not {cls!r}"
    )


def elicitation_schema(cls: type) -> Dict[str, Any]:
    """The restricted ``requestedSchema`` of a model: the JSON Schema of its fields (as for
    a tool's arguments; ``Optional`` ones not required), restricted by the core to what a
    form can hold (``mcp_sansio._core.elicitation_form``: a flat object of string, number,
    integer, boolean and enum fields, a list of an enum being a multi-select). Raises
    ``TypeError`` naming the first field that cannot be a form field."""
    builder = SchemaBuilder()
    properties: Dict[str, Any] = {}
    required = []
    hints: Dict[str, Any] = {}
    for name, hint, is_required, extra in elicitation_fields(cls):
        hints[name] = hint
        properties[name] = {**builder.schema(hint), **extra}
        if is_required and not _optional(hint):
            required.append(name)
    schema: Dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    try:
        return elicitation_form(builder.finish(schema))
    except TypeError as e:
        field = getattr(e, "field", None)
        if field not in hints:
            raise
        raise TypeError(
            f"elicitation schema {cls.__name__}: field {field!r} is {_hint_name(hints[field])}: {e}"
        ) from None


def _optional(hint: Any) -> bool:
    """Whether a hint is ``Optional[X]`` (``X | None``): a field a form may leave empty."""
    hint, _ = unwrap(hint)
    return is_union(hint) and type(None) in typing.get_args(hint)


def _hint_name(hint: Any) -> str:
    if isinstance(hint, type) and not typing.get_args(hint):
        return hint.__name__
    return repr(hint).replace("typing.", "")
