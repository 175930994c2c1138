//! Random values of the main message types, fitted to each version, validate against that
//! version's schema

use crate::schema_support;

use std::cell::RefCell;

use mcp_sansio::schema::*;
use mcp_sansio::{Era, ProtocolVersion};
use proptest::prelude::*;
use schema_support::{Doc, Schemas, add_session_meta};
use serde::Serialize;
use serde_json::{Map, Value, json};

thread_local! {
    static SCHEMAS: RefCell<Schemas> = RefCell::new(Schemas::load());
}

/// Fits `value` to every version and validates it against `name` (`sub` below it); `client`
/// adds the modern session `_meta`
fn check_all<T: FitVersion + Serialize + Clone>(
    value: &T,
    name: &str,
    sub: &str,
    client: bool,
) -> Result<(), TestCaseError> {
    SCHEMAS.with(|s| {
        let mut s = s.borrow_mut();
        for v in ProtocolVersion::ALL {
            let Some(pointer) = s.pointer(Doc::Core(v), name, sub) else {
                continue;
            };
            let mut x = value.clone();
            x.fit_to(v);
            let mut json = serde_json::to_value(&x).unwrap();
            if client && v.era() == Era::Modern {
                add_session_meta(v, &mut json);
            }
            if let Err(e) = s.validate(Doc::Core(v), &pointer, &json) {
                return Err(TestCaseError::fail(format!(
                    "{v} {name}: {e}\n  value: {json}"
                )));
            }
        }
        Ok(())
    })
}

fn text() -> impl Strategy<Value = String> {
    "[ -~]{0,12}"
}

fn uri() -> impl Strategy<Value = String> {
    "[a-z]{1,8}".prop_map(|p| format!("file:///{p}"))
}

fn meta() -> impl Strategy<Value = Option<Meta>> {
    proptest::option::of(("[a-z]{1,5}", any::<i32>()).prop_map(|(k, v)| {
        let mut m = Map::new();
        m.insert(format!("example.com/{k}"), Value::from(v));
        m
    }))
}

fn annotations() -> impl Strategy<Value = Option<Annotations>> {
    proptest::option::of((any::<bool>(), 0.0f64..=1.0).prop_map(|(both, p)| {
        let mut a = Annotations::default();
        a.priority = serde_json::Number::from_f64(p);
        a.audience = Some(if both {
            vec![Role::User, Role::Assistant]
        } else {
            vec![Role::User]
        });
        a
    }))
}

fn icons() -> impl Strategy<Value = Option<Vec<Icon>>> {
    proptest::option::of(proptest::collection::vec(
        ("[a-z]{1,6}", any::<bool>()).prop_map(|(n, dark)| {
            let mut icon = Icon::new(format!("https://example.com/{n}.png"));
            icon.theme = Some(if dark {
                IconTheme::Dark
            } else {
                IconTheme::Light
            });
            icon
        }),
        0..3,
    ))
}

fn resource() -> impl Strategy<Value = Resource> {
    (
        uri(),
        text(),
        proptest::option::of(text()),
        proptest::option::of(text()),
        annotations(),
        proptest::option::of(0u64..1 << 40),
        icons(),
        meta(),
    )
        .prop_map(
            |(uri, name, title, description, annotations, size, icons, meta)| {
                let mut r = Resource::new(uri, name);
                r.title = title;
                r.description = description;
                r.annotations = annotations;
                r.size = size;
                r.icons = icons;
                r.meta = meta;
                r
            },
        )
}

fn content_block() -> impl Strategy<Value = ContentBlock> {
    prop_oneof![
        (text(), annotations(), meta()).prop_map(|(t, a, m)| {
            let mut c = TextContent::new(t);
            c.annotations = a;
            c.meta = m;
            ContentBlock::Text(c)
        }),
        "[A-Za-z0-9]{0,8}".prop_map(|d| ContentBlock::image(d, "image/png")),
        ("[A-Za-z0-9]{0,8}", annotations()).prop_map(|(d, a)| {
            let mut c = MediaContent::new(d, "audio/wav");
            c.annotations = a;
            ContentBlock::Audio(c)
        }),
        resource().prop_map(ContentBlock::ResourceLink),
        (uri(), text()).prop_map(|(u, t)| ContentBlock::resource(ResourceContents::text(u, t))),
        (uri(), "[A-Za-z0-9]{0,8}")
            .prop_map(|(u, b)| ContentBlock::resource(ResourceContents::blob(u, b))),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from),
        proptest::collection::vec(any::<i32>(), 0..3).prop_map(|v| json!(v)),
        ("[a-z]{1,4}", any::<i32>()).prop_map(|(k, v)| json!({ k: v })),
    ]
}

fn tool() -> impl Strategy<Value = Tool> {
    (
        "[a-z_]{1,10}",
        proptest::option::of(text()),
        any::<bool>(),
        proptest::option::of(prop_oneof![Just("object"), Just("array"), Just("string")]),
        proptest::option::of((any::<bool>(), any::<bool>())),
        proptest::option::of(prop_oneof![Just(TaskSupport::Forbidden), Just(TaskSupport::Optional), Just(TaskSupport::Required)]),
        icons(),
        meta(),
    )
        .prop_map(|(name, description, with_props, output, hints, support, icons, meta)| {
            let input = if with_props {
                json!({"properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false})
            } else {
                json!({})
            };
            let Value::Object(input) = input else { unreachable!() };
            let mut t = Tool::new(name, input);
            t.description = description;
            if let Some(ty) = output {
                let Value::Object(o) = json!({"type": ty}) else { unreachable!() };
                t.output_schema = Some(o);
            }
            if let Some((ro, d)) = hints {
                let mut a = ToolAnnotations::default();
                a.read_only_hint = Some(ro);
                a.destructive_hint = Some(d);
                t.annotations = Some(a);
            }
            if let Some(s) = support {
                t = t.with_task_support(s);
            }
            t.icons = icons;
            t.meta = meta;
            t
        })
}

fn call_tool_result() -> impl Strategy<Value = CallToolResult> {
    (
        proptest::collection::vec(content_block(), 0..5),
        proptest::option::of(json_value()),
        proptest::option::of(any::<bool>()),
        meta(),
    )
        .prop_map(|(content, structured, is_error, meta)| {
            let mut r = CallToolResult::new(content);
            r.structured_content = structured;
            r.is_error = is_error;
            r.meta = meta;
            r
        })
}

fn prompt() -> impl Strategy<Value = Prompt> {
    (
        "[a-z]{1,8}",
        proptest::option::of(text()),
        proptest::collection::vec(("[a-z]{1,5}", any::<bool>()), 0..3),
        icons(),
        meta(),
    )
        .prop_map(|(name, description, args, icons, meta)| {
            let mut p = Prompt::new(name).with_arguments(
                args.into_iter()
                    .map(|(n, r)| PromptArgument::new(n).required(r))
                    .collect(),
            );
            p.description = description;
            p.icons = icons;
            p.meta = meta;
            p
        })
}

fn options() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec(("[a-z]{1,5}", text()), 1..4)
}

fn primitive_schema() -> impl Strategy<Value = PrimitiveSchema> {
    prop_oneof![
        (proptest::option::of(text()), proptest::option::of(0u64..10)).prop_map(|(title, min)| {
            let mut s = StringSchema::default();
            s.title = title;
            s.min_length = min;
            s.format = Some(StringFormat::Uri);
            PrimitiveSchema::String(s)
        }),
        (any::<bool>(), any::<i32>()).prop_map(|(int, min)| {
            let mut s = NumberSchema::default();
            s.kind = if int {
                NumberType::Integer
            } else {
                NumberType::Number
            };
            s.minimum = Some(min.into());
            PrimitiveSchema::Number(s)
        }),
        proptest::option::of(any::<bool>()).prop_map(|d| {
            let mut s = BooleanSchema::default();
            s.default = d;
            PrimitiveSchema::Boolean(s)
        }),
        options().prop_map(|o| {
            let mut s = UntitledSingleSelectEnumSchema::default();
            s.values = o.into_iter().map(|(v, _)| v).collect();
            PrimitiveSchema::UntitledSingleSelect(s)
        }),
        options().prop_map(|o| {
            let mut s = TitledSingleSelectEnumSchema::default();
            s.one_of = o.into_iter().map(|(v, t)| EnumOption::new(v, t)).collect();
            PrimitiveSchema::TitledSingleSelect(s)
        }),
        options().prop_map(|o| {
            let mut s = UntitledMultiSelectEnumSchema::default();
            s.items.values = o.into_iter().map(|(v, _)| v).collect();
            PrimitiveSchema::UntitledMultiSelect(s)
        }),
        options().prop_map(|o| {
            let mut s = TitledMultiSelectEnumSchema::default();
            s.items.any_of = o.into_iter().map(|(v, t)| EnumOption::new(v, t)).collect();
            PrimitiveSchema::TitledMultiSelect(s)
        }),
        options().prop_map(|o| {
            let mut s = LegacyTitledEnumSchema::default();
            let (values, names) = o.into_iter().unzip();
            s.values = values;
            s.enum_names = Some(names);
            PrimitiveSchema::LegacyTitled(s)
        }),
    ]
}

fn elicit_params() -> impl Strategy<Value = ElicitParams> {
    prop_oneof![
        (
            text(),
            proptest::collection::vec(("[a-z]{1,6}", primitive_schema(), any::<bool>()), 0..5)
        )
            .prop_map(|(message, fields)| {
                let mut schema = ElicitationSchema::new();
                for (name, field, required) in fields {
                    schema = schema.with_property(name, field, required);
                }
                ElicitParams::form(message, schema)
            }),
        (text(), "[a-z]{1,8}", "[a-z0-9]{1,8}").prop_map(|(m, path, id)| ElicitParams::url(
            m,
            format!("https://example.com/{path}"),
            id
        )),
    ]
}

fn sampling_block() -> impl Strategy<Value = SamplingContent> {
    prop_oneof![
        text().prop_map(SamplingContent::text),
        "[A-Za-z0-9]{0,8}".prop_map(|d| SamplingContent::Image(MediaContent::new(d, "image/png"))),
        "[A-Za-z0-9]{0,8}".prop_map(|d| SamplingContent::Audio(MediaContent::new(d, "audio/wav"))),
        ("[a-z0-9]{1,4}", "[a-z]{1,6}").prop_map(|(id, name)| SamplingContent::ToolUse(
            ToolUseContent::new(id, name, Map::new())
        )),
        (
            "[a-z0-9]{1,4}",
            proptest::collection::vec(content_block(), 0..3)
        )
            .prop_map(|(id, c)| SamplingContent::ToolResult(ToolResultContent::new(id, c))),
    ]
}

fn create_message_params() -> impl Strategy<Value = CreateMessageParams> {
    (
        proptest::collection::vec(
            (
                any::<bool>(),
                proptest::collection::vec(sampling_block(), 0..4),
                any::<bool>(),
            ),
            1..4,
        ),
        1u64..10_000,
        proptest::option::of(proptest::collection::vec(tool(), 0..2)),
        proptest::option::of(0.0f64..=1.0),
    )
        .prop_map(|(messages, max_tokens, tools, priority)| {
            let messages = messages
                .into_iter()
                .map(|(user, blocks, single)| {
                    let role = if user { Role::User } else { Role::Assistant };
                    match (single, blocks.first()) {
                        (true, Some(b)) => SamplingMessage::new(role, b.clone()),
                        _ => SamplingMessage::new(role, blocks),
                    }
                })
                .collect();
            let mut p = CreateMessageParams::new(messages, max_tokens);
            if let Some(tools) = tools {
                p.tools = Some(tools);
                p.tool_choice = Some(ToolChoice::new(ToolChoiceMode::Required));
            }
            if let Some(pr) = priority {
                let mut prefs = ModelPreferences::default();
                prefs.speed_priority = serde_json::Number::from_f64(pr);
                prefs.hints = Some(vec![ModelHint::new("m")]);
                p.model_preferences = Some(prefs);
            }
            p
        })
}

proptest! {
    #![proptest_config(crate::common::beside_source(ProptestConfig { cases: 64, ..ProptestConfig::default() }))]

    #[test]
    fn tools_validate(t in tool()) {
        check_all(&t, "Tool", "", false)?;
        check_all(&ListToolsResult::new(vec![t]).with_cache(1, CacheScope::Public), "ListToolsResult", "", false)?;
    }

    #[test]
    fn call_tool_results_validate(r in call_tool_result()) {
        check_all(&r, "CallToolResult", "", false)?;
    }

    #[test]
    fn resources_validate(r in resource()) {
        check_all(&r, "Resource", "", false)?;
        check_all(&ListResourcesResult::new(vec![r]).with_cache(0, CacheScope::Private), "ListResourcesResult", "", false)?;
    }

    #[test]
    fn prompts_validate(p in prompt(), blocks in proptest::collection::vec(content_block(), 1..4)) {
        check_all(&p, "Prompt", "", false)?;
        let messages = blocks.into_iter().map(|b| PromptMessage::new(Role::Assistant, b)).collect();
        check_all(&GetPromptResult::new(messages), "GetPromptResult", "", false)?;
    }

    #[test]
    fn elicit_params_validate(p in elicit_params()) {
        check_all(&p, "ElicitRequest", "/properties/params", false)?;
    }

    #[test]
    fn create_message_params_validate(p in create_message_params()) {
        check_all(&p, "CreateMessageRequest", "/properties/params", false)?;
    }

    #[test]
    fn create_message_results_validate(blocks in proptest::collection::vec(sampling_block(), 0..4)) {
        check_all(&CreateMessageResult::new(blocks, "m"), "CreateMessageResult", "", false)?;
    }

    #[test]
    fn call_tool_params_validate(name in "[a-z]{1,8}", args in proptest::option::of(("[a-z]{1,4}", json_value()))) {
        let mut p = CallToolParams::new(name);
        if let Some((k, v)) = args {
            let mut m = Map::new();
            m.insert(k, v);
            p = p.with_arguments(m);
        }
        check_all(&p, "CallToolRequest", "/properties/params", true)?;
    }
}

/// One field of a JSON Schema as a derive macro writes it, and whether a form can hold it
fn source_field() -> impl Strategy<Value = (Value, bool)> {
    let format = prop_oneof![
        Just(None),
        Just(Some("email")),
        Just(Some("uri")),
        Just(Some("date")),
        Just(Some("date-time")),
        Just(Some("uuid")),
    ];
    let nullable = |ty: &str, null: bool| if null { json!([ty, "null"]) } else { json!(ty) };
    prop_oneof![
        (format, any::<bool>(), proptest::option::of(text())).prop_map(move |(f, null, d)| {
            let mut s = json!({"type": nullable("string", null), "pattern": "^.*$"});
            if let Some(f) = f {
                s["format"] = json!(f);
            }
            if let Some(d) = d {
                s["description"] = json!(d);
            }
            (s, true)
        }),
        (prop_oneof![Just("integer"), Just("number")], any::<bool>(), any::<i32>())
            .prop_map(move |(ty, null, n)| {
                (json!({"type": nullable(ty, null), "format": "int32", "minimum": n, "default": n}), true)
            }),
        any::<bool>().prop_map(move |null| (json!({"type": nullable("boolean", null)}), true)),
        // Enums: plain behind a `$ref`, titled `oneOf`, nullable, and a list of one
        Just((json!({"$ref": "#/$defs/Plain", "description": "d"}), true)),
        Just((json!({"$ref": "#/$defs/Titled"}), true)),
        Just((json!({"anyOf": [{"$ref": "#/$defs/Titled"}, {"type": "null"}]}), true)),
        Just((json!({"type": "array", "items": {"$ref": "#/$defs/Plain"}, "uniqueItems": true}), true)),
        Just((json!({"type": "array", "items": {"$ref": "#/$defs/Titled"}, "maxItems": 2}), true)),
        // What no form holds
        Just((json!({"$ref": "#/$defs/Nested"}), false)),
        Just((json!({"type": "array", "items": {"type": "string"}}), false)),
        Just((json!({"type": "object", "additionalProperties": {"type": "integer"}}), false)),
        Just((json!({}), false)),
    ]
}

proptest! {
    #![proptest_config(crate::common::beside_source(ProptestConfig { cases: 64, ..ProptestConfig::default() }))]

    /// A derived schema of fields a form holds becomes a form with the same fields that
    /// validates (fitted) in every version; one with a field no form holds is refused,
    /// naming such a field
    #[test]
    fn forms_restricted_from_json_schemas_validate(
        fields in proptest::collection::btree_map("[a-z]{1,6}", (source_field(), any::<bool>()), 0..6)
    ) {
        let properties: Map<String, Value> =
            fields.iter().map(|(k, ((s, _), _))| (k.clone(), s.clone())).collect();
        let required: Vec<&String> = fields.iter().filter(|(_, (_, r))| *r).map(|(k, _)| k).collect();
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "T",
            "type": "object",
            "properties": properties,
            "required": required,
            "$defs": {
                "Plain": {"type": "string", "enum": ["a", "b"]},
                "Titled": {"oneOf": [
                    {"type": "string", "enum": ["x"]},
                    {"type": "string", "const": "y", "description": "Why"}
                ]},
                "Nested": {"type": "object", "properties": {"a": {"type": "string"}}}
            }
        });
        let refused: Vec<&String> = fields.iter().filter(|(_, ((_, ok), _))| !ok).map(|(k, _)| k).collect();
        match ElicitationSchema::from_json_schema(&schema) {
            Ok(form) => {
                prop_assert!(refused.is_empty(), "{refused:?} accepted");
                prop_assert_eq!(form.properties.keys().collect::<Vec<_>>(), fields.keys().collect::<Vec<_>>());
                let form_required = form.required.clone().unwrap_or_default();
                prop_assert_eq!(form_required.iter().collect::<Vec<_>>(), required);
                // A form is its own restriction
                let again = ElicitationSchema::from_json_schema(&serde_json::to_value(&form).unwrap());
                prop_assert_eq!(again.as_ref(), Ok(&form));
                check_all(&ElicitParams::form("m", form), "ElicitRequest", "/properties/params", false)?;
            }
            Err(FormSchemaError::Field { field, .. }) => {
                prop_assert!(refused.contains(&&field), "{field} refused, {refused:?} expected");
            }
            Err(other) => prop_assert!(false, "{other}"),
        }
    }

    /// Any JSON at all: an answer, never a panic
    #[test]
    fn any_json_restricts_without_panicking(v in json_value(), props in json_value()) {
        let _ = ElicitationSchema::from_json_schema(&v);
        let _ = ElicitationSchema::from_json_schema(&json!({"type": "object", "properties": {"f": props}}));
    }
}
