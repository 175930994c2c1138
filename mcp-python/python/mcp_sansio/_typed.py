"""Typed tools: JSON values into the instances a handler's annotations ask for (dataclasses,
TypedDicts, Enums, pydantic models, nested in lists, dicts and Optionals), its return value
into ``structuredContent`` under the output schema of its return annotation, and typed
elicitation (``ctx.elicit(message, schema=SomeDataclass)``).

The schemas come from :mod:`._schema`; this module converts values and wraps handlers.
"""

import dataclasses
import datetime
import enum
import functools
import inspect
import json
import typing
import uuid
from typing import Any, Callable, Dict, Generic, Optional, Tuple, TypeVar

from . import _schema

T = TypeVar("T")
Convert = Callable[[Any], Any]
_making: set = set()  # TypedDicts whose converters are being made


# --- JSON into instances ---------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _cached_converter(hint: Any) -> Optional[Convert]:
    return _make_converter(hint)


def converter(hint: Any) -> Optional[Convert]:
    """A function turning a JSON value into what ``hint`` asks for, or ``None`` when the
    JSON value already is that (str, numbers, plain lists and dicts, ...)."""
    try:
        return _cached_converter(hint)
    except TypeError:  # unhashable hint
        return _make_converter(hint)


def _make_converter(hint: Any) -> Optional[Convert]:
    hint, _ = _schema.unwrap(hint)
    if _schema.is_enum(hint):
        return lambda v, cls=hint: v if isinstance(v, cls) else cls(v)
    if _schema.is_pydantic_model(hint):
        return lambda v, cls=hint: v if isinstance(v, cls) else cls.model_validate(v)
    if _schema.is_dataclass_type(hint):
        return _dataclass_converter(hint)
    if _schema.is_typeddict(hint):
        return _typeddict_converter(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _schema.is_union(hint):
        return _union_converter(args)
    if origin in (list, set, frozenset, tuple) or origin in _schema._SEQUENCES:
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            items = [converter(a) for a in args]
            return lambda v: tuple(c(x) if c else x for c, x in zip(items, v)) if isinstance(v, list) else v
        item = converter(args[0]) if args else None
        build = origin if origin in (set, frozenset, tuple) else None
        if item is None and build is None:
            return None
        return lambda v: _sequence(v, item, build)
    if origin in _schema._MAPPINGS and len(args) == 2:
        value = converter(args[1])
        if value is None:
            return None
        return lambda v: {k: value(x) for k, x in v.items()} if isinstance(v, dict) else v
    if hint is datetime.datetime:
        return lambda v: datetime.datetime.fromisoformat(v) if isinstance(v, str) else v
    if hint is datetime.date:
        return lambda v: datetime.date.fromisoformat(v) if isinstance(v, str) else v
    if hint is uuid.UUID:
        return lambda v: uuid.UUID(v) if isinstance(v, str) else v
    return None


def _sequence(value: Any, item: Optional[Convert], build: Any) -> Any:
    if not isinstance(value, (list, tuple, set, frozenset)):
        return value
    items = [item(x) for x in value] if item else list(value)
    return build(items) if build else items


def _union_converter(args: Tuple[Any, ...]) -> Optional[Convert]:
    members = [(a, converter(a)) for a in args if a is not type(None)]
    if all(c is None for _, c in members):
        return None

    def convert(value: Any) -> Any:
        if value is None:
            return None
        errors = []
        for hint, c in members:
            if c is None:
                if _matches(hint, value):
                    return value
                continue
            try:
                return c(value)
            except Exception as e:  # try the next member
                errors.append(e)
        if errors and len(errors) == sum(1 for _, c in members if c is not None):
            raise errors[0]
        return value

    return convert


def _matches(hint: Any, value: Any) -> bool:
    """Whether a JSON value already fits a member of a union that needs no conversion."""
    base = typing.get_origin(hint) or hint
    if base in (typing.Literal,):
        return value in typing.get_args(hint)
    if base is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(base, type):
        return isinstance(value, base)
    return True


def _is_optional(hint: Any) -> bool:
    hint, _ = _schema.unwrap(hint)
    return _schema.is_union(hint) and type(None) in typing.get_args(hint)


def _dataclass_converter(cls: type) -> Convert:
    fields: list = []  # the fields' converters, made at the first call (a model may contain itself)

    def convert(value: Any) -> Any:
        if isinstance(value, cls) or not isinstance(value, dict):
            return value
        if not fields:
            fields.extend(
                (name, converter(hint), required and _is_optional(hint))
                for name, hint, required, _ in _schema.model_fields(cls)
            )
        kwargs = {}
        for name, c, none_if_missing in fields:
            if name in value:
                kwargs[name] = c(value[name]) if c else value[name]
            elif none_if_missing:
                kwargs[name] = None
        return cls(**kwargs)

    return convert


def _typeddict_converter(cls: type) -> Optional[Convert]:
    if cls in _making:  # it contains itself: convert lazily
        return lambda v: (converter(cls) or (lambda x: x))(v)
    _making.add(cls)
    try:
        fields = {name: converter(hint) for name, hint, _, _ in _schema.model_fields(cls)}
    finally:
        _making.discard(cls)
    fields = {name: c for name, c in fields.items() if c is not None}
    if not fields:
        return None

    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: fields[k](v) if k in fields else v for k, v in value.items()}

    return convert


# --- instances into JSON ---------------------------------------------------------------


def to_json(value: Any) -> Any:
    """A handler's value as JSON data: dataclasses as objects of their fields, Enums as their
    values, pydantic models by ``model_dump(mode="json", by_alias=True)``, tuples and sets as lists, dates and
    UUIDs as strings."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, dict):
        return {str(to_json(k)) if not isinstance(k, str) else k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump") and _schema.is_pydantic_model(type(value)):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


# --- typed tools -----------------------------------------------------------------------


def typed_tool(
    fn: Callable[..., Any], context_type: type, output: Optional[Dict[str, Any]] = None
) -> Tuple[Callable[..., Any], Optional[Dict[str, Any]]]:
    """What a typed tool needs: the function to register (``fn``, or a wrapper that converts
    its arguments and shapes its result) and the output schema derived from its return
    annotation (``output``, the schema given, wins)."""
    hints = _schema.signature_hints(fn)
    convert: Dict[str, Convert] = {}
    for name, param in inspect.signature(fn).parameters.items():
        hint = hints.get(name, param.annotation)
        if hint is inspect.Parameter.empty or _schema.is_context(name, hint, context_type):
            continue
        c = converter(hint)
        if c is not None:
            convert[name] = c
    returns = hints.get("return", inspect.Parameter.empty)
    structured = returns is not inspect.Parameter.empty and _schema.is_structured(returns)
    wrap = False
    if structured:
        derived, wrap = _schema.output_schema(returns)
        output = output or derived
    if not convert and not structured:
        return fn, output

    def args(kwargs: Dict[str, Any]) -> Dict[str, Any]:
        for name, c in convert.items():
            if name in kwargs:
                kwargs[name] = c(kwargs[name])
        return kwargs

    def result(value: Any) -> Any:
        return structured_result(value, wrap, returns) if structured else value

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def typed_async(**kwargs: Any) -> Any:
            return result(await fn(**args(kwargs)))

        return typed_async, output

    @functools.wraps(fn)
    def typed(**kwargs: Any) -> Any:
        return result(fn(**args(kwargs)))

    return typed, output


def structured_result(value: Any, wrap: bool, hint: Any = None) -> Any:
    """A typed tool's return value as a ``CallToolResult``: ``structuredContent`` (wrapped as
    ``{"result": ...}`` when its schema is not an object's) and its JSON text as the text
    block. A ``CallToolResult`` dict is kept as it is."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return value
    data = to_json(value)
    if wrap:
        data = {"result": data}
    elif not isinstance(data, dict):
        raise TypeError(f"the tool returned {type(value).__name__}, not the {_schema._hint_name(hint)} its annotation says")
    return {
        "content": [{"type": "text", "text": json.dumps(data, ensure_ascii=False)}],
        "structuredContent": data,
    }


# --- typed elicitation -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ElicitResult(Generic[T]):
    """The answer to a typed elicitation (``ctx.elicit(message, schema=SomeType)``):
    ``action`` is ``"accept"`` (then ``content`` is a ``SomeType``), ``"decline"`` or
    ``"cancel"`` (``content`` is ``None``)."""

    action: str
    content: Optional[T] = None

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (and ``content`` holds the answer)."""
        return self.action == "accept"

    @property
    def data(self) -> Optional[T]:
        """``content``, under the official SDK's name (``result.data``)."""
        return self.content


@functools.lru_cache(maxsize=256)
def _elicitation(cls: type) -> Tuple[Dict[str, Any], Convert]:
    schema = _schema.elicitation_schema(cls)
    convert = converter(cls) or (lambda v: v)
    return schema, convert


def elicitation_request(schema: Any) -> Tuple[Dict[str, Any], Optional[Convert]]:
    """The ``requestedSchema`` for ``schema`` (a dict schema as it is, or a model type) and
    how an accepted answer's content becomes an instance (``None`` for a dict schema)."""
    if isinstance(schema, dict):
        return schema, None
    if not isinstance(schema, type):
        raise TypeError(f"an elicitation schema is a dict or a type, not {schema!r}")
    return _elicitation(schema)


def elicit_result(answer: Dict[str, Any], convert: Convert) -> ElicitResult[Any]:
    action = answer.get("action", "cancel")
    if action != "accept":
        return ElicitResult(action)
    return ElicitResult(action, convert(dict(answer.get("content") or {})))
