//! Typed input from the user: `Context::elicit::<T>` sends the form derived from `T`, and
//! the client's answer comes back decoded (accepted), declined or cancelled; in both eras
//! (2025-11-25 live elicitation, 2026-07-28 `input_required` and a retry), over the
//! in-memory pipes and over HTTP. A `T` that cannot be a form fails before anything is sent.

use std::sync::{Arc, Mutex};

use mcp_sansio::schema::{CallToolResult, InputRequests, InputResponse, Tool};
use mcp_sansio::{CallError, ClientConfig, EraMode, Implementation, ServerConfig};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::support::LEGACY;
use crate::binding::{Client, ClientError, ClientOptions, Elicited, Server};
use crate::{dialect, rt};

/// The form: every kind of field a form holds
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Booking {
    /// Who is coming
    name: String,
    /// How many seats
    #[schemars(range(min = 1, max = 12))]
    seats: u8,
    #[schemars(email)]
    email: Option<String>,
    area: Area,
    /// Extras
    #[serde(default)]
    extras: Vec<Extra>,
    vip: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Area {
    Inside,
    Terrace,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
enum Extra {
    /// A high chair
    HighChair,
    /// Flowers on the table
    Flowers,
}

/// No form: a nested struct
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct WithAddress {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    address: Address,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Address {
    #[allow(dead_code)]
    street: String,
}

/// What the client must receive as `requestedSchema` for [`Booking`], written by hand
fn booking_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "area": {"type": "string", "enum": ["inside", "terrace"]},
            "email": {"type": "string", "format": "email"},
            "extras": {"type": "array", "description": "Extras", "items": {"anyOf": [
                {"const": "HighChair", "title": "A high chair"},
                {"const": "Flowers", "title": "Flowers on the table"}
            ]}},
            "name": {"type": "string", "description": "Who is coming"},
            "seats": {"type": "integer", "description": "How many seats", "minimum": 1, "maximum": 12},
            "vip": {"type": "boolean"}
        },
        "required": ["name", "seats", "area", "vip"]
    })
}

/// A server with `book`, which elicits a [`Booking`] and says what came back, and
/// `address`, which tries to elicit a [`WithAddress`]
fn server() -> Server {
    let mut config = ServerConfig::new(Implementation::new("elicit-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .tool(
            Tool::new("book", Map::new()),
            handler!(|cx, _args| {
                let text = match aw!(cx.elicit::<Booking>("Book a table"))? {
                    Elicited::Accepted(b) => format!(
                        "{} x{} {:?} {:?} {:?} vip={}",
                        b.name, b.seats, b.email, b.area, b.extras, b.vip
                    ),
                    Elicited::Declined => "declined".to_owned(),
                    Elicited::Cancelled => "cancelled".to_owned(),
                    _ => "?".to_owned(),
                };
                Ok(CallToolResult::text(text))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("address", Map::new()),
            handler!(|cx, _args| {
                aw!(cx.elicit::<WithAddress>("Where?"))?;
                Ok(CallToolResult::text("never"))
            }),
        )
        .unwrap()
        .build()
}

/// What the client answers (`accept` with a booking, `decline`, `cancel`, or `accept` with
/// content that ignores the form), and the requests it got
#[derive(Clone, Default)]
struct Answers {
    action: Arc<Mutex<&'static str>>,
    asked: Arc<Mutex<Vec<InputRequests>>>,
}

impl Answers {
    fn options(&self) -> ClientOptions {
        let answers = self.clone();
        ClientOptions::default().input(dialect::input_handler(move |requests| {
            answers.asked.lock().unwrap().push(requests.clone());
            let answer = match *answers.action.lock().unwrap() {
                "accept" => json!({"action": "accept", "content": {
                    "name": "Ada", "seats": 2, "area": "terrace", "extras": ["Flowers"],
                    "vip": true
                }}),
                "wrong" => json!({"action": "accept", "content": {"name": "Ada", "seats": "two"}}),
                other => json!({ "action": other }),
            };
            let answer: InputResponse = serde_json::from_value(answer).unwrap();
            Ok(requests
                .keys()
                .map(|k| (k.clone(), answer.clone()))
                .collect())
        }))
    }

    fn set(&self, action: &'static str) {
        *self.action.lock().unwrap() = action;
    }

    /// The forms the client was asked to fill in since the last look, one request each
    /// (keyed `elicit-0` in 2026; a live 2025 request has no key, and the client's input
    /// handler sees it under its method)
    fn forms(&self, era: EraMode) -> Vec<Value> {
        let key = if era == EraMode::Modern {
            "elicit-0"
        } else {
            "elicitation/create"
        };
        std::mem::take(&mut *self.asked.lock().unwrap())
            .into_iter()
            .map(|requests| {
                assert_eq!(requests.len(), 1, "{era:?}");
                let value = serde_json::to_value(&requests).unwrap();
                assert_eq!(
                    value[key]["method"], "elicitation/create",
                    "{era:?}: {value}"
                );
                assert_eq!(value[key]["params"]["message"], "Book a table");
                value[key]["params"]["requestedSchema"].clone()
            })
            .collect()
    }
}

fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = era;
    config.capabilities = json!({"elicitation": {}});
    config
}

dialect_fn! {
    /// `book` answered, declined and cancelled, an answer that ignores the form, and
    /// `address`'s form that cannot be built, with `client` in `era`
    async fn round_trips(client: &Client, answers: &Answers, era: EraMode) {
        answers.set("accept");
        let result = aw!(client.call_tool("book", Map::new())).unwrap();
        assert_eq!(
            result.content[0].as_text(),
            Some("Ada x2 None Terrace [Flowers] vip=true"),
            "{era:?}"
        );
        assert_eq!(answers.forms(era), [booking_form()], "{era:?}: asked once, this form");

        for (action, said) in [("decline", "declined"), ("cancel", "cancelled")] {
            answers.set(action);
            let result = aw!(client.call_tool("book", Map::new())).unwrap();
            assert_eq!(result.content[0].as_text(), Some(said), "{era:?}");
            assert_eq!(answers.forms(era).len(), 1, "{era:?}");
        }

        answers.set("wrong");
        match aw!(client.call_tool("book", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => {
                assert_eq!(e.code, -32602, "{era:?}");
                assert!(
                    e.message.starts_with(
                        "Invalid params: the client's answer does not fit the form: \
                         invalid type: string \"two\", expected u8"
                    ),
                    "{era:?}: {}",
                    e.message
                );
            }
            other => panic!("{era:?}: {other:?}"),
        }
        answers.forms(era);

        match aw!(client.call_tool("address", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => {
                assert_eq!(e.code, -32603, "{era:?}");
                assert_eq!(
                    e.message,
                    "Internal error: the elicitation form cannot be built: field `address` is an object; an \
                     elicitation form takes only string, number, integer, boolean and enum \
                     fields (and lists of an enum)",
                    "{era:?}"
                );
            }
            other => panic!("{era:?}: {other:?}"),
        }
        assert!(answers.forms(era).is_empty(), "{era:?}: nothing was sent");
    }
}

#[test]
fn a_typed_form_round_trips_in_both_eras() {
    rt::block_on(async {
        for era in [LEGACY, EraMode::Modern] {
            let (r, w) = super::serve(server());
            let answers = Answers::default();
            let client = aw!(Client::connect_with(r, w, config(era), answers.options())).unwrap();
            aw!(round_trips(&client, &answers, era));
        }
    });
}

#[test]
fn before_2025_11_25_a_multi_select_is_left_out_of_the_form() {
    rt::block_on(async {
        let era = EraMode::Legacy(mcp_sansio::ProtocolVersion::V2025_06_18);
        let (r, w) = super::serve(server());
        let answers = Answers::default();
        let client = aw!(Client::connect_with(r, w, config(era), answers.options())).unwrap();
        answers.set("accept");
        let result = aw!(client.call_tool("book", Map::new())).unwrap();
        // The answer's list is dropped too (2025-06-18 has none): `extras` is its default.
        assert_eq!(
            result.content[0].as_text(),
            Some("Ada x2 None Terrace [] vip=true")
        );
        let mut form = booking_form();
        form["properties"].as_object_mut().unwrap().remove("extras");
        assert_eq!(answers.forms(era), [form]);
    });
}

#[derive(Deserialize, schemars::JsonSchema)]
struct First {
    a: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Second {
    b: bool,
}

#[test]
fn two_questions_of_one_handler_get_their_own_answers_in_both_eras() {
    rt::block_on(async {
        for era in [LEGACY, EraMode::Modern] {
            let mut server_config = ServerConfig::new(Implementation::new("two-questions", "1.0"));
            server_config.state_key = Some([7; 32]);
            let server = Server::builder(server_config)
                .tool(
                    Tool::new("two", Map::new()),
                    handler!(|cx, _args| {
                        let first = aw!(cx.elicit::<First>("first?"))?.accepted();
                        let second = aw!(cx.elicit::<Second>("second?"))?.accepted();
                        let (a, b) = (first.map(|f| f.a), second.map(|s| s.b));
                        Ok(CallToolResult::text(format!("{a:?} {b:?}")))
                    }),
                )
                .unwrap()
                .build();
            let (r, w) = super::serve(server);
            let asked = Arc::new(Mutex::new(Vec::new()));
            let log = Arc::clone(&asked);
            // Answers each form by its field: `a` gets "x", `b` gets true
            let answering = dialect::input_handler(move |requests: &InputRequests| {
                let mut responses = mcp_sansio::schema::InputResponses::new();
                for (key, request) in requests {
                    let request = serde_json::to_value(request).unwrap();
                    log.lock().unwrap().push(key.clone());
                    let fields = &request["params"]["requestedSchema"]["properties"];
                    let content = if fields.get("a").is_some() {
                        json!({"a": "x"})
                    } else {
                        json!({"b": true})
                    };
                    let answer = json!({"action": "accept", "content": content});
                    responses.insert(key.clone(), serde_json::from_value(answer).unwrap());
                }
                Ok(responses)
            });
            let options = ClientOptions::default().input(answering);
            let client = aw!(Client::connect_with(r, w, config(era), options)).unwrap();
            let result = aw!(client.call_tool("two", Map::new())).unwrap();
            assert_eq!(
                result.content[0].as_text(),
                Some("Some(\"x\") Some(true)"),
                "{era:?}"
            );
            // 2026: one round per question, each asking only what is not answered yet
            let keys = if era == EraMode::Modern {
                ["elicit-0", "elicit-1"]
            } else {
                ["elicitation/create", "elicitation/create"]
            };
            assert_eq!(*asked.lock().unwrap(), keys, "{era:?}");
        }
    });
}

#[test]
fn without_the_capability_elicit_is_the_spec_error() {
    rt::block_on(async {
        let (r, w) = super::serve(server());
        let mut config = config(EraMode::Modern);
        config.capabilities = json!({});
        let client = aw!(Client::connect(r, w, config)).unwrap();
        match aw!(client.call_tool("book", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32021),
            other => panic!("{other:?}"),
        }
    });
}

#[cfg(feature = "http")]
#[test]
fn a_typed_form_round_trips_over_http_in_both_eras() {
    use std::net::SocketAddr;
    use std::time::Duration;

    use mcp_sansio::http::HttpConfig;

    rt::block_on(async {
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = aw!(server().serve_http_with(localhost, HttpConfig::default())).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        for era in [LEGACY, EraMode::Modern] {
            let answers = Answers::default();
            let client = aw!(rt::timeout(
                Duration::from_secs(10),
                Client::connect_http(&url, config(era), answers.options()),
            ))
            .expect("connects in time")
            .unwrap();
            aw!(round_trips(&client, &answers, era));
        }
        aw!(handle.shutdown());
    });
}
