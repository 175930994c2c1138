from dataclasses import dataclass, field
from enum import Enum

from mcp_sansio.aio import Context, Server

server = Server("weather", "1.0")


class Units(Enum):
    METRIC = "metric"
    IMPERIAL = "imperial"


@dataclass
class WeatherData:
    temperature: float = field(metadata={"description": "Temperature in the units asked for"})
    conditions: str
    humidity: float


@dataclass
class Trip:
    city: str
    nights: int
    units: Units = Units.METRIC


@server.tool(description="Get current weather data for a location")
def get_weather(location: str, units: Units = Units.METRIC) -> WeatherData:
    celsius = 22.5
    temperature = celsius if units is Units.METRIC else celsius * 9 / 5 + 32
    return WeatherData(temperature, f"Partly cloudy in {location}", 65.0)


@server.tool(description="Plans a trip, asking the user where to")
async def plan_trip(ctx: Context) -> str:
    answer = await ctx.elicit("Where to, and for how long?", schema=Trip)
    if not answer.accepted:
        return f"no trip ({answer.action})"
    trip = answer.content  # a Trip
    weather = get_weather(trip.city, trip.units)
    return f"{trip.nights} nights in {trip.city}: {weather.conditions}, {weather.temperature:g}"


if __name__ == "__main__":
    server.run()
