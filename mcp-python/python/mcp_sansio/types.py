"""The typed results of the clients (:class:`mcp_sansio.aio.Client`,
:class:`mcp_sansio.sync.Client`).

Every result is a :class:`Model`: the ``dict`` the server sent (so ``result["content"]``,
``json.dumps(result)``, ``result == {...}`` and ``isinstance(result, dict)`` keep working)
whose fields also read as attributes, under the wire's camelCase names and under the
snake_case names of the official SDK's models::

    result = await client.call_tool("add", {"a": 1, "b": 2})
    result.content[0].text          # "3"
    result.structured_content       # or result.structuredContent; None when not sent
    result.is_error                 # or result.isError; False when not sent
    result.model_dump()             # a plain dict, as the protocol sends it

A field the protocol defines for the object reads as its default when the server left it
out (``None``, ``False`` or an empty list, as in the official SDK); any other name that is
not in the object raises ``AttributeError``. Nested protocol objects are models too
(``TextContent``, ``Tool``, ``Resource``, ``PromptMessage``, ...); free-form JSON
(``structuredContent``, ``inputSchema``, ``_meta``, ...) stays plain dicts and lists.

One name differs from a dict: :class:`Completion` reads ``completion.values`` as the list
of values (the field), not ``dict.values()``.
"""

import functools
import json
import re
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Mapping, Optional, Tuple, Type, Union

__all__ = [
    "Model",
    "Result",
    "EmptyResult",
    "Implementation",
    "ServerCapabilities",
    "InitializeResult",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "EmbeddedResource",
    "TextResourceContents",
    "BlobResourceContents",
    "Tool",
    "CallToolResult",
    "ListToolsResult",
    "Resource",
    "ResourceTemplate",
    "ListResourcesResult",
    "ListResourceTemplatesResult",
    "ReadResourceResult",
    "PromptArgument",
    "Prompt",
    "PromptMessage",
    "ListPromptsResult",
    "GetPromptResult",
    "Completion",
    "CompleteResult",
    "Task",
    "CreateTaskResult",
    "GetTaskResult",
    "CancelTaskResult",
    "ListTasksResult",
    "result_for",
]


@functools.lru_cache(maxsize=512)
def _wire_name(name: str) -> str:
    """``structured_content`` -> ``structuredContent``; ``meta`` -> ``_meta``."""
    if name == "meta":
        return "_meta"
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


@functools.lru_cache(maxsize=512)
def _snake_name(key: str) -> str:
    """``structuredContent`` -> ``structured_content``; ``_meta`` -> ``meta``."""
    if key == "_meta":
        return "meta"
    return _CAMEL.sub(lambda m: "_" + m.group(1).lower(), key)


#: A field's nested type: a Model class, or a function choosing one from the dict
Kind = Union[Type["Model"], Callable[[Dict[str, Any]], Type["Model"]]]


def _wrap(kind: Kind, value: Any) -> Any:
    if isinstance(value, list):
        return [_wrap(kind, v) for v in value]
    if isinstance(value, dict) and not isinstance(value, Model):
        cls = kind if isinstance(kind, type) else kind(value)
        return cls(value)
    return value  # not an object (a peer's mistake): left as it came


class Model(dict):
    """A protocol object: a ``dict`` with attribute access (see the module's docs).

    ``model_dump()`` gives a plain ``dict`` (``by_alias=False``: the snake_case names of
    the official SDK's models, for the protocol's fields only), ``model_dump_json()`` its
    JSON text, ``Model.model_validate(d)`` wraps a dict."""

    __slots__ = ()

    #: The protocol's fields of this object: wire name -> the value read when absent
    _fields: ClassVar[Dict[str, Any]] = {}
    #: The fields holding protocol objects (a dict or a list of them): wire name -> kind
    _nested: ClassVar[Dict[str, Kind]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass's fields add to its base's.
        super().__init_subclass__(**kwargs)
        base = cls.__mro__[1]
        cls._fields = {**getattr(base, "_fields", {}), **cls.__dict__.get("_fields", {})}
        cls._nested = {**getattr(base, "_nested", {}), **cls.__dict__.get("_nested", {})}

    def __init__(self, data: Union[Mapping[str, Any], Iterable[Tuple[str, Any]]] = (), **fields: Any) -> None:
        super().__init__(data, **fields)
        for key, kind in type(self)._nested.items():
            value = dict.get(self, key)
            if value is not None:
                dict.__setitem__(self, key, _wrap(kind, value))

    @classmethod
    def model_validate(cls, data: Mapping[str, Any]) -> "Model":
        """``data`` (a dict as the protocol sends it) as this model."""
        return cls(data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self:
            return self[name]
        key = _wire_name(name)
        if key in self:
            return self[key]
        fields = type(self)._fields
        if key in fields:
            default = fields[key]
            return [] if isinstance(default, list) else default
        raise AttributeError(f"{type(self).__name__} has no field {name!r} (it has {sorted(self)})")

    def __setattr__(self, name: str, value: Any) -> None:
        self[name if name in self else _wire_name(name)] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name if name in self else _wire_name(name)]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> List[str]:
        names = set(dir(type(self)))
        for key in list(self) + list(type(self)._fields):
            if isinstance(key, str) and key.replace("_", "").isalnum():
                names.add(key)
                names.add(_snake_name(key))
        return sorted(names)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"

    def model_dump(self, *, mode: str = "python", by_alias: bool = True, exclude_none: bool = False) -> Dict[str, Any]:
        """A plain ``dict`` (nested objects and lists copied): the wire's names (camelCase,
        ``_meta``), or with ``by_alias=False`` the official SDK's snake_case names for the
        protocol's fields (free-form JSON such as ``structuredContent`` keeps its keys).
        ``exclude_none`` leaves out fields whose value is ``None``. The values are JSON
        already, so ``mode`` (``"python"`` or ``"json"``) changes nothing."""
        if mode not in ("python", "json"):
            raise ValueError(f"mode must be 'python' or 'json', not {mode!r}")
        return _dump(self, by_alias, exclude_none)

    def model_dump_json(self, *, indent: Optional[int] = None, by_alias: bool = True, exclude_none: bool = False) -> str:
        """:meth:`model_dump` as JSON text."""
        return json.dumps(self.model_dump(by_alias=by_alias, exclude_none=exclude_none), indent=indent, ensure_ascii=False)


def _dump(value: Any, by_alias: bool, exclude_none: bool) -> Any:
    if isinstance(value, dict):
        rename = not by_alias and isinstance(value, Model)
        return {
            (_snake_name(k) if rename and isinstance(k, str) else k): _dump(v, by_alias, exclude_none)
            for k, v in value.items()
            if not (exclude_none and v is None)
        }
    if isinstance(value, list):
        return [_dump(v, by_alias, exclude_none) for v in value]
    return value


_META = {"_meta": None}

# --- the server --------------------------------------------------------------------------


class Result(Model):
    """Any request's result (the base of the others)."""

    __slots__ = ()
    _fields = {**_META, "resultType": "complete"}


class EmptyResult(Result):
    """A result without fields (``ping``, ...)."""

    __slots__ = ()
    _fields = {"resultType": None}


class Implementation(Model):
    """A server's (or client's) ``name``, ``version``, ``title``, ..."""

    __slots__ = ()
    _fields = {"name": None, "version": None, "title": None, "description": None, "websiteUrl": None, "icons": None}


class ServerCapabilities(Model):
    """What the server declared (``capabilities.tools.listChanged``, ...)."""

    __slots__ = ()
    _fields = {k: None for k in ("experimental", "logging", "completions", "prompts", "resources", "tools", "tasks", "extensions")}
    _nested = {k: Model for k in ("logging", "completions", "prompts", "resources", "tools", "tasks")}


class InitializeResult(Result):
    """The server as the connection found it: version, capabilities, ``serverInfo``, instructions."""

    __slots__ = ()
    _fields = {"protocolVersion": None, "capabilities": None, "serverInfo": None, "instructions": None}
    _nested = {"capabilities": ServerCapabilities, "serverInfo": Implementation}


# --- content -----------------------------------------------------------------------------

_ANNOTATED = {"annotations": None, **_META}


class TextContent(Model):
    """Text."""

    __slots__ = ()
    _fields = {"type": "text", "text": None, **_ANNOTATED}
    _nested = {"annotations": Model}


class ImageContent(Model):
    """An image (base64 ``data``)."""

    __slots__ = ()
    _fields = {"type": "image", "data": None, "mimeType": None, **_ANNOTATED}
    _nested = {"annotations": Model}


class AudioContent(Model):
    """Audio (base64 ``data``)."""

    __slots__ = ()
    _fields = {"type": "audio", "data": None, "mimeType": None, **_ANNOTATED}
    _nested = {"annotations": Model}


class ResourceLink(Model):
    """A link to a resource."""

    __slots__ = ()
    _fields = {"type": "resource_link", "uri": None, "name": None, "title": None, "description": None, "mimeType": None, "size": None, "icons": None, **_ANNOTATED}
    _nested = {"annotations": Model}


class TextResourceContents(Model):
    """A resource's text."""

    __slots__ = ()
    _fields = {"uri": None, "mimeType": None, "text": None, **_META}


class BlobResourceContents(Model):
    """A resource's bytes (base64 ``blob``)."""

    __slots__ = ()
    _fields = {"uri": None, "mimeType": None, "blob": None, **_META}


def _resource_contents(d: Dict[str, Any]) -> Type[Model]:
    return BlobResourceContents if "blob" in d else TextResourceContents


class EmbeddedResource(Model):
    """A resource's contents inside a result."""

    __slots__ = ()
    _fields = {"type": "resource", "resource": None, **_ANNOTATED}
    _nested = {"resource": _resource_contents, "annotations": Model}


_CONTENT = {"text": TextContent, "image": ImageContent, "audio": AudioContent, "resource_link": ResourceLink, "resource": EmbeddedResource}


def _content_block(d: Dict[str, Any]) -> Type[Model]:
    return _CONTENT.get(d.get("type"), Model)  # type: ignore[arg-type]


# --- tools -------------------------------------------------------------------------------


class Tool(Model):
    """A tool the server offers (``inputSchema`` and ``outputSchema`` stay plain dicts)."""

    __slots__ = ()
    _fields = {
        "name": None, "title": None, "description": None, "inputSchema": None, "outputSchema": None,
        "annotations": None, "execution": None, "icons": None, **_META,
    }
    _nested = {"annotations": Model, "execution": Model}


class CallToolResult(Result):
    """A tool's answer: ``content`` blocks, ``structured_content`` (plain JSON), ``is_error``."""

    __slots__ = ()
    _fields = {"content": [], "structuredContent": None, "isError": False}
    _nested = {"content": _content_block}


_PAGE = {"nextCursor": None}


class ListToolsResult(Result):
    """A page of tools."""

    __slots__ = ()
    _fields = {"tools": [], **_PAGE}
    _nested = {"tools": Tool}


# --- resources ---------------------------------------------------------------------------

_DESCRIBED = {"name": None, "title": None, "description": None, "mimeType": None, "annotations": None, "icons": None, **_META}


class Resource(Model):
    """A resource."""

    __slots__ = ()
    _fields = {"uri": None, "size": None, **_DESCRIBED}
    _nested = {"annotations": Model}


class ResourceTemplate(Model):
    """A resource template."""

    __slots__ = ()
    _fields = {"uriTemplate": None, **_DESCRIBED}
    _nested = {"annotations": Model}


class ListResourcesResult(Result):
    """A page of resources."""

    __slots__ = ()
    _fields = {"resources": [], **_PAGE}
    _nested = {"resources": Resource}


class ListResourceTemplatesResult(Result):
    """A page of resource templates."""

    __slots__ = ()
    _fields = {"resourceTemplates": [], **_PAGE}
    _nested = {"resourceTemplates": ResourceTemplate}


class ReadResourceResult(Result):
    """A resource's contents."""

    __slots__ = ()
    _fields = {"contents": []}
    _nested = {"contents": _resource_contents}


# --- prompts -----------------------------------------------------------------------------


class PromptArgument(Model):
    """An argument of a prompt."""

    __slots__ = ()
    _fields = {"name": None, "title": None, "description": None, "required": None}


class Prompt(Model):
    """A prompt the server offers."""

    __slots__ = ()
    _fields = {"name": None, "title": None, "description": None, "arguments": None, "icons": None, **_META}
    _nested = {"arguments": PromptArgument}


class PromptMessage(Model):
    """A message of a prompt."""

    __slots__ = ()
    _fields = {"role": None, "content": None}
    _nested = {"content": _content_block}


class ListPromptsResult(Result):
    """A page of prompts."""

    __slots__ = ()
    _fields = {"prompts": [], **_PAGE}
    _nested = {"prompts": Prompt}


class GetPromptResult(Result):
    """A prompt's messages."""

    __slots__ = ()
    _fields = {"description": None, "messages": []}
    _nested = {"messages": PromptMessage}


# --- completion --------------------------------------------------------------------------


class Completion(Model):
    """The completion's ``values`` (a list: ``completion.values`` is the field here, not
    ``dict.values()``), ``total``, ``has_more``."""

    __slots__ = ()
    _fields = {"values": [], "total": None, "hasMore": None}

    @property
    def values(self) -> List[str]:  # type: ignore[override]
        return self.get("values", [])


class CompleteResult(Result):
    """Completion values for an argument."""

    __slots__ = ()
    _fields = {"completion": None}
    _nested = {"completion": Completion}


# --- tasks -------------------------------------------------------------------------------

_TASK = {"taskId": None, "status": None, "statusMessage": None, "createdAt": None, "lastUpdatedAt": None, "ttl": None, "pollInterval": None}


class Task(Model):
    """A task: ``task_id``, ``status``, ``status_message``, ..."""

    __slots__ = ()
    _fields = {**_TASK, **_META}


class CreateTaskResult(Result):
    """A request answered with a task."""

    __slots__ = ()
    _fields = {"task": None}
    _nested = {"task": Task}


class GetTaskResult(Result):
    """``tasks/get``: the task's state."""

    __slots__ = ()
    _fields = _TASK


class CancelTaskResult(Result):
    """``tasks/cancel``: the task's state."""

    __slots__ = ()
    _fields = _TASK


class ListTasksResult(Result):
    """A page of tasks."""

    __slots__ = ()
    _fields = {"tasks": [], **_PAGE}
    _nested = {"tasks": Task}


#: The result type of each request method (others: :class:`Result`)
RESULTS: Dict[str, Type[Model]] = {
    "initialize": InitializeResult,
    "ping": EmptyResult,
    "tools/call": CallToolResult,
    "tools/list": ListToolsResult,
    "resources/list": ListResourcesResult,
    "resources/templates/list": ListResourceTemplatesResult,
    "resources/read": ReadResourceResult,
    "resources/subscribe": EmptyResult,
    "resources/unsubscribe": EmptyResult,
    "prompts/list": ListPromptsResult,
    "prompts/get": GetPromptResult,
    "completion/complete": CompleteResult,
    "logging/setLevel": EmptyResult,
    "tasks/get": GetTaskResult,
    "tasks/cancel": CancelTaskResult,
    "tasks/list": ListTasksResult,
}


def result_for(method: str, result: Any) -> Any:
    """``result`` (a dict from the session) as the model of ``method``'s result."""
    if not isinstance(result, dict) or isinstance(result, Model):
        return result
    return RESULTS.get(method, Result)(result)
