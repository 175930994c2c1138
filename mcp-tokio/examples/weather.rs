//! The spec's weather server, written with the macros: a tool with an output schema, a
//! progress tool, a tool that asks the user (typed elicitation), a resource, a template and a
//! prompt. `weather-builder.rs` is the same server with the builder alone.
//!
//! `cargo run -p mcp-sansio-tokio --example weather` and speak MCP on stdin/stdout.

use std::time::Duration;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::{Implementation, Progress, ServerConfig};
use mcp_sansio_tokio::{Context, Elicited, Server, prompt, resource, tool, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Units {
    #[default]
    Metric,
    Imperial,
}

#[derive(Serialize, JsonSchema)]
struct WeatherData {
    /// Temperature in the units asked for
    temperature: f64,
    conditions: String,
    humidity: f64,
}

/// Where to, and for how long
#[derive(Deserialize, JsonSchema)]
struct Trip {
    city: String,
    nights: u32,
    #[serde(default)]
    units: Units,
}

/// Get current weather data for a location
#[tool(read_only, title = "Current weather")]
async fn get_weather(location: String, units: Option<Units>) -> WeatherData {
    let celsius = 22.5;
    let temperature = match units.unwrap_or_default() {
        Units::Metric => celsius,
        Units::Imperial => celsius * 9.0 / 5.0 + 32.0,
    };
    WeatherData {
        temperature,
        conditions: format!("Partly cloudy in {location}"),
        humidity: 65.0,
    }
}

/// Forecasts the week, reporting each day as it goes
#[tool(read_only)]
async fn forecast_week(cx: Context, location: String) -> String {
    for day in 1..=7 {
        cx.progress(
            Progress::new(f64::from(day))
                .total(7.0)
                .message(format!("day {day}")),
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    format!("A mild week in {location}")
}

/// Plans a trip, asking the user where to
#[tool]
async fn plan_trip(cx: Context) -> Result<String, ErrorObject> {
    let Elicited::Accepted(trip) = cx.elicit::<Trip>("Where to, and for how long?").await? else {
        return Ok("no trip".into());
    };
    let weather = get_weather(trip.city.clone(), Some(trip.units)).await;
    Ok(format!(
        "{} nights in {}: {}, {}",
        trip.nights, trip.city, weather.conditions, weather.temperature
    ))
}

/// The weather stations
#[resource("weather://stations", mime_type = "application/json")]
fn stations() -> String {
    r#"["porto", "lisbon"]"#.into()
}

/// One station's latest reading
#[resource("weather://stations/{id}", name = "station", mime_type = "text/plain")]
fn station(id: String) -> String {
    format!("{id}: 22.5 °C, 65% humidity")
}

/// What to pack for a trip
#[prompt]
fn packing_list(city: String, nights: Option<String>) -> String {
    let nights = nights.unwrap_or_else(|| "a few".into());
    format!("What should I pack for {nights} nights in {city}?")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = ServerConfig::new(Implementation::new("weather", "1.0"));
    Server::builder(config)
        .register(tools![
            get_weather,
            forecast_week,
            plan_trip,
            stations,
            station,
            packing_list
        ])?
        .build()
        .serve_stdio()
        .await;
    Ok(())
}
