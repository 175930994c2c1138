//! The weather server of `weather.rs` written with the builder alone (the escape hatch
//! under the macros): every schema by hand, results and arguments converted by hand
//!
//! `cargo run -p mcp-sansio-tokio --example weather-builder` and speak MCP on stdin/stdout.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, GetPromptResult, InputRequest, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool, ToolAnnotations,
};
use mcp_sansio::{Implementation, Progress, ServerConfig};
use mcp_sansio_tokio::Server;
use serde_json::{Map, Value, json};

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn weather(location: &str, units: &str) -> Value {
    let celsius = 22.5;
    let temperature = if units == "imperial" {
        celsius * 9.0 / 5.0 + 32.0
    } else {
        celsius
    };
    json!({"temperature": temperature, "conditions": format!("Partly cloudy in {location}"), "humidity": 65.0})
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let units = json!({"type": "string", "enum": ["metric", "imperial"]});
    let mut read_only = ToolAnnotations::default();
    read_only.read_only_hint = Some(true);
    let mut get_weather = Tool::new(
        "get_weather",
        object(json!({
            "type": "object",
            "properties": {"location": {"type": "string"}, "units": units},
            "required": ["location"]
        })),
    )
    .with_description("Get current weather data for a location")
    .with_output_schema(object(json!({
        "type": "object",
        "properties": {
            "temperature": {"type": "number", "description": "Temperature in the units asked for"},
            "conditions": {"type": "string"},
            "humidity": {"type": "number"}
        },
        "required": ["temperature", "conditions", "humidity"]
    })));
    get_weather.title = Some("Current weather".into());
    get_weather.annotations = Some(read_only.clone());
    let mut forecast = Tool::new(
        "forecast_week",
        object(json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]})),
    )
    .with_description("Forecasts the week, reporting each day as it goes");
    forecast.annotations = Some(read_only);
    let plan_trip = Tool::new("plan_trip", object(json!({"type": "object"})))
        .with_description("Plans a trip, asking the user where to");

    let server = Server::builder(ServerConfig::new(Implementation::new("weather", "1.0")))
        .tool(get_weather, |_cx, args| async move {
            let location = args.get("location").and_then(Value::as_str).unwrap_or_default();
            let units = args.get("units").and_then(Value::as_str).unwrap_or("metric");
            Ok(CallToolResult::structured(weather(location, units)))
        })?
        .tool(forecast, |cx, args| async move {
            let location = args.get("location").and_then(Value::as_str).unwrap_or_default().to_owned();
            for day in 1..=7 {
                cx.progress(Progress::new(f64::from(day)).total(7.0).message(format!("day {day}")));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(CallToolResult::text(format!("A mild week in {location}")))
        })?
        .tool(plan_trip, |cx, _args| async move {
            let request: InputRequest = serde_json::from_value(json!({
                "method": "elicitation/create",
                "params": {"message": "Where to, and for how long?", "requestedSchema": {
                    "type": "object",
                    "description": "Where to, and for how long",
                    "properties": {
                        "city": {"type": "string"},
                        "nights": {"type": "integer", "minimum": 0},
                        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"}
                    },
                    "required": ["city", "nights"]
                }}
            }))
            .map_err(ErrorObject::internal_error)?;
            let answers = cx.ask([("trip".to_owned(), request)].into()).await.map_err(|e| e.to_error())?;
            let answer = answers.get("trip").and_then(|a| serde_json::to_value(a).ok()).unwrap_or_default();
            if answer["action"] != "accept" {
                return Ok(CallToolResult::text("no trip"));
            }
            let content = &answer["content"];
            let (Some(city), Some(nights)) = (content["city"].as_str(), content["nights"].as_u64()) else {
                return Err(ErrorObject::invalid_params("the answer lacks city or nights"));
            };
            let units = content["units"].as_str().unwrap_or("metric");
            let w = weather(city, units);
            Ok(CallToolResult::text(format!("{nights} nights in {city}: {}, {}", w["conditions"].as_str().unwrap_or_default(), w["temperature"])))
        })?
        .resource(
            Resource::new("weather://stations", "stations")
                .with_description("The weather stations")
                .with_mime_type("application/json"),
            |_cx, uri, _vars| async move {
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(uri, r#"["porto", "lisbon"]"#).with_mime_type("application/json"),
                ]))
            },
        )?
        .resource_template(
            {
                let mut template = ResourceTemplate::new("weather://stations/{id}", "station");
                template.description = Some("One station's latest reading".into());
                template.mime_type = Some("text/plain".into());
                template
            },
            |_cx, uri, vars| async move {
                let id = vars.get_str("id").unwrap_or_default().to_owned();
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(uri, format!("{id}: 22.5 °C, 65% humidity")).with_mime_type("text/plain"),
                ]))
            },
        )?
        .prompt(
            Prompt::new("packing_list")
                .with_description("What to pack for a trip")
                .with_arguments(vec![
                    PromptArgument::new("city").required(true),
                    PromptArgument::new("nights").required(false),
                ]),
            |_cx, args: BTreeMap<String, String>| async move {
                let city = args.get("city").cloned().ok_or_else(|| ErrorObject::invalid_params("missing argument `city`"))?;
                let nights = args.get("nights").cloned().unwrap_or_else(|| "a few".into());
                Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::user(format!(
                    "What should I pack for {nights} nights in {city}?"
                ))]))
            },
        )?
        .build();
    server.serve_stdio().await;
    Ok(())
}
