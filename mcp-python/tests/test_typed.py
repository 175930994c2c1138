"""Typed tools: schemas derived from type hints (each checked against the schema a user would
write by hand), arguments converted into instances, output schemas and ``structuredContent``
from return annotations, and typed elicitation in both eras.

Normalization: none; the derived schemas are compared with ``==``. Nested models are inlined
(only a model that contains itself goes into ``$defs``), ``Optional[X]`` is
``{"anyOf": [X, {"type": "null"}]}``.
"""

import asyncio
import contextlib
import dataclasses
import datetime
import enum
import json
import sys
import uuid
from dataclasses import dataclass, field
import pytest

if sys.version_info < (3, 11):  # typing.NotRequired; the module itself runs on 3.10 too
    pytest.skip("these tests use typing.NotRequired (3.11)", allow_module_level=True)

from typing import Annotated, Any, Dict, List, Literal, NotRequired, Optional, Set, Tuple, TypedDict  # noqa: E402

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, ElicitResult, Server

ERAS = ["legacy", "modern"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


# --- the types -------------------------------------------------------------------------------


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Color(enum.Enum):
    """An enum whose members carry titles: a titled enum."""

    RED = ("#FF0000", "Red")
    GREEN = ("#00FF00", "Green")

    def __new__(cls, value, title):
        member = object.__new__(cls)
        member._value_ = value
        member.title = title
        return member


@dataclass
class Location:
    city: str
    country: str = "NL"


@dataclass
class Query:
    location: Location
    unit: Unit = Unit.CELSIUS
    days: int = field(default=1, metadata={"description": "Days to forecast"})
    tags: List[str] = field(default_factory=list)


class Point(TypedDict):
    x: float
    y: float
    label: NotRequired[str]


class Options(TypedDict, total=False):
    verbose: bool
    level: Level


@dataclass
class Node:
    name: str
    children: List["Node"] = field(default_factory=list)


@dataclass
class Weather:
    temperature: float
    conditions: str
    unit: Unit


@dataclass
class Contact:
    name: str
    age: int
    subscribe: bool = False
    email: Optional[str] = None
    color: Color = Color.RED
    size: Literal["s", "m", "l"] = "m"


class ContactDict(TypedDict):
    name: str
    rating: NotRequired[float]


# --- schemas: one per annotation kind, against the schema written by hand ------------------


def tool_schema(fn):
    server = Server("t")
    server.tool()(fn)
    return server.catalog.tool(fn.__name__)


def input_property(hint):
    def f(x): ...

    f.__annotations__ = {"x": hint}
    return tool_schema(f)["inputSchema"]


STRING_ENUM = {"type": "string", "enum": ["celsius", "fahrenheit"]}
LOCATION = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string", "default": "NL"}},
    "required": ["city"],
}

CASES = [
    ("str", str, {"type": "string"}),
    ("int", int, {"type": "integer"}),
    ("float", float, {"type": "number"}),
    ("bool", bool, {"type": "boolean"}),
    ("any", Any, {}),
    ("datetime", datetime.datetime, {"type": "string", "format": "date-time"}),
    ("date", datetime.date, {"type": "string", "format": "date"}),
    ("uuid", uuid.UUID, {"type": "string", "format": "uuid"}),
    ("literal", Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    ("literal-int", Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    ("enum", Unit, STRING_ENUM),
    ("int-enum", Level, {"type": "integer", "enum": [1, 2]}),
    ("titled-enum", Color, {"type": "string", "oneOf": [
        {"const": "#FF0000", "title": "Red"}, {"const": "#00FF00", "title": "Green"}]}),
    ("optional", Optional[str], {"anyOf": [{"type": "string"}, {"type": "null"}]}),
    ("pipe-none", int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    ("list", List[int], {"type": "array", "items": {"type": "integer"}}),
    ("list-of-enum", list[Unit], {"type": "array", "items": STRING_ENUM}),
    ("set", Set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
    ("tuple-var", Tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    ("tuple-fixed", Tuple[str, int], {
        "type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "minItems": 2, "maxItems": 2}),
    ("dict", Dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
    ("dict-any", Dict[str, Any], {"type": "object"}),
    ("annotated", Annotated[str, "The city"], {"type": "string", "description": "The city"}),
    ("dataclass", Location, LOCATION),
    ("nested-dataclass", Query, {
        "type": "object",
        "properties": {
            "location": LOCATION,
            "unit": {**STRING_ENUM, "default": "celsius"},
            "days": {"type": "integer", "description": "Days to forecast", "default": 1},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["location"],
    }),
    ("typeddict", Point, {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "label": {"type": "string"}},
        "required": ["x", "y"],
    }),
    ("typeddict-total-false", Options, {
        "type": "object",
        "properties": {"verbose": {"type": "boolean"}, "level": {"type": "integer", "enum": [1, 2]}},
    }),
    ("list-of-models", List[Point], {"type": "array", "items": {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "label": {"type": "string"}},
        "required": ["x", "y"],
    }}),
    ("optional-model", Optional[Location], {"anyOf": [LOCATION, {"type": "null"}]}),
]


@pytest.mark.parametrize("kind,hint,expected", CASES, ids=[c[0] for c in CASES])
def test_parameter_schema_per_annotation_kind(kind, hint, expected):
    schema = input_property(hint)
    assert schema == {"type": "object", "properties": {"x": expected}, "required": ["x"]}
    ms.ServerConfig("t", "1", tools=[{"name": "t", "inputSchema": schema}])  # the core accepts it


def test_recursive_model_goes_to_defs():
    node = {"$ref": "#/$defs/Node"}
    assert input_property(Node) == {
        "type": "object",
        "properties": {"x": node},
        "required": ["x"],
        "$defs": {"Node": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": node}},
            "required": ["name"],
        }},
    }


def test_enum_of_values_that_are_not_json_accepts_any_value():
    class Odd(enum.Enum):
        A = (1, 2)
        B = object()

    assert input_property(Odd)["properties"]["x"] == {}


def test_defaults_of_parameters():
    def f(unit: Unit = Unit.FAHRENHEIT, n: int = 3, tags: Optional[List[str]] = None): ...

    assert tool_schema(f)["inputSchema"] == {"type": "object", "properties": {
        "unit": {**STRING_ENUM, "default": "fahrenheit"},
        "n": {"type": "integer", "default": 3},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
    }}


def test_pydantic_model_schema():
    pydantic = pytest.importorskip("pydantic")

    class Address(pydantic.BaseModel):
        street: str

    class Person(pydantic.BaseModel):
        name: str = pydantic.Field(description="Full name")
        address: Address

    schema = input_property(Person)
    by_pydantic = Person.model_json_schema()
    defs = by_pydantic.pop("$defs")
    assert schema == {"type": "object", "properties": {"x": by_pydantic}, "required": ["x"], "$defs": defs}
    assert by_pydantic["properties"]["address"] == {"$ref": "#/$defs/Address"}
    ms.ServerConfig("t", "1", tools=[{"name": "t", "inputSchema": schema}])


# --- output schemas ------------------------------------------------------------------------

WEATHER = {
    "type": "object",
    "properties": {
        "temperature": {"type": "number"},
        "conditions": {"type": "string"},
        "unit": STRING_ENUM,
    },
    "required": ["temperature", "conditions", "unit"],
}


def test_output_schemas():
    def weather() -> Weather: ...

    def point() -> Point: ...

    def table() -> Dict[str, Weather]: ...

    def many() -> List[Location]: ...

    def maybe() -> Optional[Location]: ...

    def text() -> str: ...

    def number() -> float: ...

    def plain() -> dict: ...

    def untyped(): ...

    def json_object() -> Dict[str, Any]: ...

    def blocks() -> List[dict]: ...

    def numbers() -> List[int]: ...

    assert tool_schema(weather)["outputSchema"] == WEATHER
    assert tool_schema(point)["outputSchema"] == input_property(Point)["properties"]["x"]
    assert tool_schema(table)["outputSchema"] == {"type": "object", "additionalProperties": WEATHER}
    assert tool_schema(many)["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": LOCATION}},
        "required": ["result"],
    }
    assert tool_schema(maybe)["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"anyOf": [LOCATION, {"type": "null"}]}},
        "required": ["result"],
    }
    assert tool_schema(numbers)["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
    }
    for fn in (text, number, plain, untyped, json_object, blocks):
        assert "outputSchema" not in tool_schema(fn), fn.__name__
    given = {"type": "object", "properties": {"t": {"type": "number"}}}
    server = Server("t")
    server.tool(output_schema=given)(weather)
    assert server.catalog.tool("weather")["outputSchema"] == given


# --- calls: converted arguments, structured results ---------------------------------------------


def typed_server():
    server = Server("typed", "1.0")
    seen = {}

    @server.tool()
    def forecast(query: Query) -> Weather:
        seen["query"] = query
        return Weather(21.5 if query.unit is Unit.CELSIUS else 70.7, f"sunny in {query.location.city}", query.unit)

    @server.tool()
    async def plot(points: List[Point], options: Options, level: Level = Level.LOW) -> Dict[str, Any]:
        seen["plot"] = (points, options, level)
        return {"n": len(points)}

    @server.tool()
    def trees(root: Node) -> List[Node]:
        seen["root"] = root
        return root.children

    @server.tool()
    async def places(names: Set[str], pair: Tuple[str, int]) -> List[Location]:
        seen["places"] = (names, pair)
        return [Location(n) for n in sorted(names)]

    @server.tool()
    def nothing(where: Optional[Location] = None) -> Optional[Location]:
        seen["where"] = where
        return where

    @server.tool()
    def when(at: datetime.date, ids: List[uuid.UUID]) -> Dict[str, datetime.date]:
        seen["when"] = (at, ids)
        return {"next": at + datetime.timedelta(days=1)}

    @server.tool()
    def explicit() -> Weather:
        return {"content": [{"type": "text", "text": "as is"}]}

    @server.tool()
    def failing() -> Weather:
        raise ValueError("no weather today")

    @server.tool()
    def liar() -> Weather:
        return "not weather"

    return server, seen


async def check_against_output_schema(c, name, structured):
    """Validates ``structured`` against the tool's ``outputSchema`` with the core's
    validator: a server whose tool takes that schema as its input schema."""
    tools = {t["name"]: t for t in (await c.list_tools())["tools"]}
    checker = Server("checker")
    checker.tool("check", input_schema=tools[name]["outputSchema"])(lambda **kw: "valid")
    async with Client.connect_in_process(checker) as cc:
        r = await cc.call_tool("check", structured)
        assert not r.get("isError"), (name, structured, r)


@pytest.mark.parametrize("era", ERAS)
def test_typed_calls(era):
    async def main():
        server, seen = typed_server()
        async with Client.connect_in_process(server, era=era) as c:
            r = await c.call_tool("forecast", {"query": {"location": {"city": "Delft"}, "unit": "fahrenheit"}})
            q = seen["query"]
            assert q == Query(Location("Delft", "NL"), Unit.FAHRENHEIT, 1, [])
            assert r["structuredContent"] == {"temperature": 70.7, "conditions": "sunny in Delft", "unit": "fahrenheit"}
            assert json.loads(r["content"][0]["text"]) == r["structuredContent"]
            assert not r.get("isError")
            await check_against_output_schema(c, "forecast", r["structuredContent"])

            r = await c.call_tool("plot", {"points": [{"x": 1, "y": 2, "label": "a"}], "options": {"level": 2}, "level": 2})
            points, options, level = seen["plot"]
            assert points == [{"x": 1, "y": 2, "label": "a"}] and options == {"level": Level.HIGH}
            assert isinstance(options["level"], Level) and level is Level.HIGH
            assert r["structuredContent"] == {"n": 1}

            tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
            r = await c.call_tool("trees", {"root": tree})
            assert seen["root"] == Node("a", [Node("b", [Node("c")])])
            assert r["structuredContent"] == {"result": [{"name": "b", "children": [{"name": "c", "children": []}]}]}
            await check_against_output_schema(c, "trees", r["structuredContent"])

            r = await c.call_tool("places", {"names": ["y", "x"], "pair": ["p", 1]})
            assert seen["places"] == ({"x", "y"}, ("p", 1))
            assert r["structuredContent"] == {"result": [{"city": "x", "country": "NL"}, {"city": "y", "country": "NL"}]}
            await check_against_output_schema(c, "places", r["structuredContent"])

            r = await c.call_tool("nothing", {})
            assert seen["where"] is None and r["structuredContent"] == {"result": None}
            r = await c.call_tool("nothing", {"where": {"city": "Oslo", "country": "NO"}})
            assert seen["where"] == Location("Oslo", "NO")
            await check_against_output_schema(c, "nothing", r["structuredContent"])

            u = "6f1c2a4e-8d0b-4c3e-9a7f-1b2c3d4e5f60"
            r = await c.call_tool("when", {"at": "2026-07-28", "ids": [u]})
            assert seen["when"] == (datetime.date(2026, 7, 28), [uuid.UUID(u)])
            assert r["structuredContent"] == {"next": "2026-07-29"}
            await check_against_output_schema(c, "when", r["structuredContent"])

            r = await c.call_tool("explicit")
            assert r["content"] == [{"type": "text", "text": "as is"}] and "structuredContent" not in r
            r = await c.call_tool("failing")
            assert r["isError"] and r["content"][0]["text"] == "no weather today"
            r = await c.call_tool("liar")
            assert r["isError"] and "Weather" in r["content"][0]["text"]

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_argument_errors_stay_precise(era):
    async def main():
        server, seen = typed_server()
        async with Client.connect_in_process(server, era=era) as c:
            r = await c.call_tool("forecast", {"query": {"location": {"city": 42}}})
            assert r["isError"] and "query" not in seen
            assert '/query/location/city: 42 is not of type "string"' in r["content"][0]["text"], r
            r = await c.call_tool("forecast", {"query": {"location": {"city": "x"}, "unit": "kelvin"}})
            assert r["isError"] and '/query/unit: "kelvin" is not one of' in r["content"][0]["text"], r
            r = await c.call_tool("trees", {"root": {"name": "a", "children": [{"name": 1}]}})
            assert r["isError"] and '/root/children/0/name: 1 is not of type "string"' in r["content"][0]["text"], r

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_pydantic_tool(era):
    pydantic = pytest.importorskip("pydantic")

    class Address(pydantic.BaseModel):
        street: str
        number: int

    class Person(pydantic.BaseModel):
        name: str
        address: Address
        nick: str = pydantic.Field(default="", alias="nickName")

    async def main():
        server = Server("p")
        got = []

        @server.tool()
        def move(person: Person, to: Address) -> Person:
            got.append(person)
            return Person(name=person.name, address=to)

        async with Client.connect_in_process(server, era=era) as c:
            tool = (await c.list_tools())["tools"][0]
            assert tool["outputSchema"] == Person.model_json_schema(mode="serialization")
            r = await c.call_tool("move", {
                "person": {"name": "Ada", "address": {"street": "A", "number": 1}, "nickName": "ada"},
                "to": {"street": "B", "number": 2},
            })
            assert isinstance(got[0], Person) and isinstance(got[0].address, Address)
            assert got[0].nick == "ada"
            assert r["structuredContent"] == {"name": "Ada", "address": {"street": "B", "number": 2}, "nickName": ""}
            await check_against_output_schema(c, "move", r["structuredContent"])
            r = await c.call_tool("move", {"person": {"name": "Ada", "address": {"street": "A", "number": "x"}}, "to": {"street": "B", "number": 2}})
            assert r["isError"] and '/person/address/number: "x" is not of type "integer"' in r["content"][0]["text"]

    run(main())


# --- typed elicitation ---------------------------------------------------------------------

CONTACT_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "subscribe": {"type": "boolean", "default": False},
        "email": {"type": "string"},
        "color": {"type": "string", "oneOf": [
            {"const": "#FF0000", "title": "Red"}, {"const": "#00FF00", "title": "Green"}], "default": "#FF0000"},
        "size": {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
    },
    "required": ["name", "age"],
}


def test_elicitation_schemas():
    from mcp_sansio import _schema

    assert _schema.elicitation_schema(Contact) == CONTACT_FORM
    assert _schema.elicitation_schema(ContactDict) == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "rating": {"type": "number"}},
        "required": ["name"],
    }

    @dataclass
    class Multi:
        units: List[Unit]

    assert _schema.elicitation_schema(Multi) == {
        "type": "object", "properties": {"units": {"type": "array", "items": STRING_ENUM}}, "required": ["units"]}

    @dataclass
    class Nested:
        name: str
        where: Location

    @dataclass
    class Listy:
        tags: List[str]

    with pytest.raises(TypeError, match="field 'where' is Location"):
        _schema.elicitation_schema(Nested)
    with pytest.raises(TypeError, match="field 'tags' is List\\[str\\]"):
        _schema.elicitation_schema(Listy)
    @dataclass
    class Either:
        value: int | str

    with pytest.raises(TypeError, match="field 'value' is int \\| str"):
        _schema.elicitation_schema(Either)
    with pytest.raises(TypeError, match="not <class 'int'>"):
        _schema.elicitation_schema(int)


def elicit_server():
    server = Server("elicit", "1.0")
    runs = []

    @server.tool()
    async def signup(ctx: Context) -> str:
        runs.append("signup")
        answer = await ctx.elicit("Who are you?", schema=Contact)
        if not answer.accepted:
            return answer.action
        c = answer.content
        assert isinstance(c, Contact) and isinstance(c.color, Color)
        return f"{c.name} {c.age} {c.subscribe} {c.email} {c.color.title} {c.size}"

    @server.tool()
    def signup_sync(ctx: Context) -> str:
        answer = ctx.elicit_blocking("Who?", schema=ContactDict)
        return f"{answer.content['name']}" if answer.accepted else answer.action

    @server.tool()
    async def bad(ctx: Context) -> str:
        @dataclass
        class Nested:
            where: Location

        await ctx.elicit("Where?", schema=Nested)
        return "sent"

    return server, runs


@contextlib.asynccontextmanager
async def connect(server, transport, era, **options):
    if transport == "stream":
        async with Client.connect_in_process(server, era=era, **options) as c:
            yield c
    else:
        async with await server.serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era, **options) as c:
                yield c


@pytest.mark.parametrize("transport", ["stream", "http"])
@pytest.mark.parametrize("era", ERAS)
def test_typed_elicitation_both_eras(era, transport):
    async def main():
        server, runs = elicit_server()
        asked = []
        answers = [
            {"action": "accept", "content": {"name": "Ada", "age": 36, "color": "#00FF00"}},
            {"action": "decline"},
            {"action": "accept", "content": {"name": "Bob", "rating": 4.5}},
        ]

        async def on_elicit(params):
            asked.append(params)
            return answers.pop(0)

        async with connect(server, transport, era, on_elicit=on_elicit) as c:
            r = await c.call_tool("signup")
            assert r["content"][0]["text"] == "Ada 36 False None Green m"
            assert asked[0]["message"] == "Who are you?"
            assert asked[0]["requestedSchema"] == CONTACT_FORM
            r = await c.call_tool("signup")
            assert r["content"][0]["text"] == "decline"
            r = await c.call_tool("signup_sync")
            assert r["content"][0]["text"] == "Bob"
            n = len(asked)
            r = await c.call_tool("bad")
            assert r["isError"] and "field 'where' is Location" in r["content"][0]["text"]
            assert len(asked) == n, "nothing was sent"
        if era == "modern":  # input_required, then the retry runs the handler again
            assert runs.count("signup") == 4
    run(main())


def test_elicit_result_matches():
    match ElicitResult("accept", Location("x")):
        case ElicitResult(action="accept", content=Location(city=city)):
            assert city == "x"
        case _:
            pytest.fail("no match")


@pytest.mark.parametrize("era", ERAS)
def test_weather_example_in_process(era):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parent.parent / "examples" / "weather.py"
    spec = importlib.util.spec_from_file_location("weather_example", path)
    weather = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(weather)

    async def on_elicit(params):
        return {"action": "accept", "content": {"city": "Lisbon", "nights": 3}}

    async def main():
        async with Client.connect_in_process(weather.server, era=era, on_elicit=on_elicit) as c:
            r = await c.call_tool("get_weather", {"location": "Porto", "units": "imperial"})
            assert r["structuredContent"] == {"temperature": 72.5, "conditions": "Partly cloudy in Porto", "humidity": 65.0}
            await check_against_output_schema(c, "get_weather", r["structuredContent"])
            r = await c.call_tool("plan_trip")
            assert r["content"][0]["text"] == "3 nights in Lisbon: Partly cloudy in Lisbon, 22.5"

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_pydantic_elicitation(era):
    pydantic = pytest.importorskip("pydantic")
    from mcp_sansio import _schema

    class Prefs(pydantic.BaseModel):
        name: str = pydantic.Field(description="Your name")
        unit: Unit = Unit.CELSIUS
        alerts: Optional[bool] = None

    class Deep(pydantic.BaseModel):
        where: Location

    assert _schema.elicitation_schema(Prefs) == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your name"},
            "unit": {**STRING_ENUM, "default": "celsius"},
            "alerts": {"type": "boolean"},
        },
        "required": ["name"],
    }
    with pytest.raises(TypeError, match="field 'where' is Location"):
        _schema.elicitation_schema(Deep)

    async def main():
        server = Server("p")

        @server.tool()
        async def prefs(ctx: Context) -> str:
            answer = await ctx.elicit("Prefs?", schema=Prefs)
            assert isinstance(answer.content, Prefs)
            return f"{answer.content.name} {answer.content.unit.value} {answer.content.alerts}"

        async def on_elicit(params):
            return {"action": "accept", "content": {"name": "Ada", "unit": "fahrenheit"}}

        async with Client.connect_in_process(server, era=era, on_elicit=on_elicit) as c:
            r = await c.call_tool("prefs")
            assert r["content"][0]["text"] == "Ada fahrenheit None"

    run(main())


def test_string_annotations_resolve_one_by_one():
    def f(query: "Query", other: "NoSuchName", n: "int" = 1) -> "Weather": ...

    schema = tool_schema(f)
    assert schema["inputSchema"]["properties"]["query"] == input_property(Query)["properties"]["x"]
    assert schema["inputSchema"]["properties"]["other"] == {}
    assert schema["inputSchema"]["properties"]["n"] == {"type": "integer", "default": 1}
    assert schema["outputSchema"] == WEATHER


def test_string_annotations_of_fields_resolve_one_by_one():
    @dataclass
    class Partly:
        query: "Query"
        local: "NoSuchName"
        n: "int" = 1

    assert input_property(Partly)["properties"]["x"] == {
        "type": "object",
        "properties": {"query": input_property(Query)["properties"]["x"], "local": {}, "n": {"type": "integer", "default": 1}},
        "required": ["query", "local"],
    }
