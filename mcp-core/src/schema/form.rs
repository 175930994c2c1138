//! From a JSON Schema to the restricted schema of an elicitation form
//!
//! [`ElicitationSchema::from_json_schema`] takes a JSON Schema of an object (typically one a
//! derive macro such as `schemars` wrote for a Rust struct, or pydantic for a model) and
//! keeps what a form can hold: a flat object whose fields are strings (with the formats
//! `email`, `uri`, `date` and `date-time`), numbers, integers, booleans, single-select enums
//! of strings (untitled `enum`, or titled `oneOf` of `const` and `title`) and multi-select
//! arrays of such enums. `$ref`s (into `$defs` or `definitions`) are resolved; nullable
//! fields (`type: [T, "null"]`, `anyOf: [T, {"type": "null"}]`) become their `T`; keywords
//! a form cannot carry (other formats, `pattern`, `uniqueItems`, numeric `format`s, ...)
//! are left out. Anything else (a nested object, a list of anything but an enum, a map, an
//! untyped value) is refused with a [`FormSchemaError`] naming the field.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::elicitation::{
    BooleanSchema, ElicitationSchema, EnumOption, NumberSchema, NumberType, PrimitiveSchema,
    StringFormat, StringSchema, TitledEnumItems, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema, UntitledEnumItems, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
};

/// How deep `$ref`s may chain before a schema counts as cyclic
const MAX_REF_DEPTH: usize = 32;

/// Why a JSON Schema cannot be an elicitation form
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormSchemaError {
    /// The schema is no object with fields
    #[error("an elicitation form is an object of fields, and this schema is {found}")]
    NotAnObject {
        /// What it is instead, in words
        found: String,
    },
    /// One field cannot be a form field
    #[error(
        "field `{field}` is {found}; an elicitation form takes only string, number, integer, \
         boolean and enum fields (and lists of an enum)"
    )]
    Field {
        /// The field's name
        field: String,
        /// What it is, in words
        found: String,
    },
}

impl ElicitationSchema {
    /// The form for a JSON Schema of an object (one a derive macro such as `schemars` wrote
    /// for a Rust struct, say): what a form can hold of it, or why it cannot be one
    ///
    /// A form is a flat object whose fields are strings (with the formats `email`, `uri`,
    /// `date` and `date-time`), numbers, integers, booleans, single-select enums of strings
    /// (untitled `enum`, or titled `oneOf` of `const` and `title`: an option's title is its
    /// `title`, else its `description`) and multi-select arrays of such enums. `$ref`s (into
    /// `$defs` or `definitions`) are resolved; a nullable field (`type: [T, "null"]`,
    /// `anyOf: [T, {"type": "null"}]`) becomes its `T`; keywords a form cannot carry (other
    /// formats, `pattern`, `uniqueItems`, numeric `format`s, the object's own title) are
    /// left out. `required` keeps the schema's order. A pure function of `schema`.
    ///
    /// # Errors
    /// [`FormSchemaError::NotAnObject`] for a schema that is no object with named fields (a
    /// map, a union); [`FormSchemaError::Field`], naming the first offending field, for a
    /// field a form cannot hold.
    ///
    /// # Example
    ///
    /// ```
    /// use mcp_sansio::schema::{ElicitationSchema, FormSchemaError};
    /// use serde_json::json;
    ///
    /// let schema = json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "name": {"type": "string", "description": "Your name"},
    ///         "size": {"$ref": "#/$defs/Size"},
    ///     },
    ///     "required": ["name"],
    ///     "$defs": {"Size": {"type": "string", "enum": ["S", "M", "L"]}},
    /// });
    /// let form = ElicitationSchema::from_json_schema(&schema)?;
    /// assert_eq!(serde_json::to_value(&form)?, json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "name": {"type": "string", "description": "Your name"},
    ///         "size": {"type": "string", "enum": ["S", "M", "L"]},
    ///     },
    ///     "required": ["name"],
    /// }));
    ///
    /// let nested = json!({"type": "object", "properties": {
    ///     "address": {"type": "object", "properties": {"street": {"type": "string"}}},
    /// }});
    /// let error = ElicitationSchema::from_json_schema(&nested).unwrap_err();
    /// assert!(matches!(error, FormSchemaError::Field { ref field, .. } if field == "address"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_schema(schema: &Value) -> Result<Self, FormSchemaError> {
        let root = Root(schema);
        let not_an_object = |found: &str| FormSchemaError::NotAnObject {
            found: found.to_owned(),
        };
        let top = root
            .resolve(schema)
            .map_err(|_| not_an_object("a broken `$ref`"))?;
        let Value::Object(top) = top else {
            return Err(not_an_object(&describe(top)));
        };
        let is_object = top.get("type").and_then(Value::as_str) == Some("object")
            || (top.get("type").is_none() && top.contains_key("properties"));
        if !is_object {
            return Err(not_an_object(&describe(&Value::Object(top.clone()))));
        }
        if top.contains_key("patternProperties")
            || top
                .get("additionalProperties")
                .is_some_and(|a| a != &Value::Bool(false))
        {
            return Err(not_an_object(
                "a map (it allows fields beyond its named properties)",
            ));
        }
        let mut properties = BTreeMap::new();
        if let Some(fields) = top.get("properties") {
            let Value::Object(fields) = fields else {
                return Err(not_an_object("an object whose `properties` is no object"));
            };
            for (name, field) in fields {
                let primitive = root.field(field).map_err(|found| FormSchemaError::Field {
                    field: name.clone(),
                    found,
                })?;
                properties.insert(name.clone(), primitive);
            }
        }
        let required: Vec<String> = top
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|name| properties.contains_key(*name))
            .map(str::to_owned)
            .collect();
        Ok(Self {
            properties,
            required: (!required.is_empty()).then_some(required),
            ..Self::default()
        })
    }
}

/// The whole schema, which `$ref`s point into
struct Root<'a>(&'a Value);

/// A field's schema with its `$ref` resolved: the referenced schema with the referring
/// schema's other keywords (a field's `description`, `default`) on top
type Merged = Map<String, Value>;

impl<'a> Root<'a> {
    /// `schema` itself, or what its `$ref` chain points to (with the first schema's own
    /// keywords over it); `Err` with words for a `$ref` that points nowhere or loops
    fn resolve(&self, schema: &'a Value) -> Result<&'a Value, String> {
        let mut current = schema;
        for _ in 0..MAX_REF_DEPTH {
            let Some(reference) = current.get("$ref") else {
                return Ok(current);
            };
            let target = reference
                .as_str()
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|pointer| self.0.pointer(pointer));
            current = target.ok_or_else(|| {
                format!("a reference ({reference}) to a schema this one does not define")
            })?;
        }
        Err("a cycle of `$ref`s".to_owned())
    }

    /// `schema` resolved and merged with its own keywords, nulls taken out: a nullable `T`
    /// is a `T` (a field that may be left out)
    fn merged(&self, schema: &'a Value) -> Result<Merged, String> {
        let Value::Object(own) = schema else {
            return Err(describe(schema));
        };
        let target = self.resolve(schema)?;
        let Value::Object(target) = target else {
            return Err(describe(target));
        };
        let mut merged = target.clone();
        for (k, v) in own {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        // `anyOf`/`oneOf` of one schema and `{"type": "null"}`: that schema
        for union in ["anyOf", "oneOf"] {
            let Some(Value::Array(members)) = merged.get(union) else {
                continue;
            };
            let rest: Vec<&Value> = members.iter().filter(|m| !is_null_schema(m)).collect();
            if rest.len() == 1 && rest.len() < members.len() {
                let inner = self.merged(rest[0])?;
                merged.remove(union);
                for (k, v) in inner {
                    merged.entry(k).or_insert(v);
                }
            }
        }
        // `type: [T, "null"]`: `T`
        if let Some(Value::Array(types)) = merged.get("type") {
            let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            if rest.len() == 1 {
                merged.insert("type".into(), rest[0].clone());
            }
        }
        if let Some(Value::Array(values)) = merged.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        if merged.get("default").is_some_and(Value::is_null) {
            merged.remove("default");
        }
        Ok(merged)
    }

    /// One field of the form; `Err` says in words what the field is instead
    fn field(&self, schema: &'a Value) -> Result<PrimitiveSchema, String> {
        let s = self.merged(schema)?;
        let title = text(&s, "title");
        let description = text(&s, "description");
        if let Some(options) = self.options(&s)? {
            return Ok(single_select(title, description, options, &s));
        }
        match s.get("type").and_then(Value::as_str) {
            Some("string") => Ok(PrimitiveSchema::String(StringSchema {
                title,
                description,
                min_length: s.get("minLength").and_then(Value::as_u64),
                max_length: s.get("maxLength").and_then(Value::as_u64),
                format: s.get("format").and_then(Value::as_str).and_then(format),
                default: text(&s, "default"),
                ..StringSchema::default()
            })),
            Some(kind @ ("number" | "integer")) => Ok(PrimitiveSchema::Number(NumberSchema {
                kind: if kind == "integer" {
                    NumberType::Integer
                } else {
                    NumberType::Number
                },
                title,
                description,
                minimum: number(&s, "minimum"),
                maximum: number(&s, "maximum"),
                default: number(&s, "default"),
                ..NumberSchema::default()
            })),
            Some("boolean") => Ok(PrimitiveSchema::Boolean(BooleanSchema {
                title,
                description,
                default: s.get("default").and_then(Value::as_bool),
                ..BooleanSchema::default()
            })),
            Some("array") => self.multi_select(title, description, &s),
            _ => Err(describe(&Value::Object(s))),
        }
    }

    /// The options of an enum schema (`enum`, `const`, or a `oneOf`/`anyOf` of those);
    /// `None` for a schema that is no enum; `Err` for an enum a form cannot offer
    fn options(&self, s: &Merged) -> Result<Option<Vec<Choice>>, String> {
        if let Some(values) = s.get("enum") {
            let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
            return strings(values).map(|v| Some(v.into_iter().map(Choice::plain).collect()));
        }
        if let Some(value) = s.get("const") {
            return strings(std::slice::from_ref(value))
                .map(|v| Some(v.into_iter().map(Choice::plain).collect()));
        }
        let Some(Value::Array(members)) = s.get("oneOf").or_else(|| s.get("anyOf")) else {
            return Ok(None);
        };
        let mut choices = Vec::new();
        for member in members {
            let m = self.merged(member)?;
            let label = text(&m, "title").or_else(|| text(&m, "description"));
            if let Some(value) = m.get("const") {
                let value = strings(std::slice::from_ref(value))?.remove(0);
                choices.push(Choice { value, label });
            } else if let Some(Value::Array(values)) = m.get("enum") {
                choices.extend(strings(values)?.into_iter().map(Choice::plain));
            } else {
                return Err(format!(
                    "a union of {}, not of string constants",
                    describe(&Value::Object(m))
                ));
            }
        }
        if choices.is_empty() {
            return Err(NO_OPTIONS.to_owned());
        }
        Ok(Some(choices))
    }

    /// A multi-select: an array whose items are an enum
    fn multi_select(
        &self,
        title: Option<String>,
        description: Option<String>,
        s: &Merged,
    ) -> Result<PrimitiveSchema, String> {
        let items = match s.get("items") {
            Some(items) => self.merged(items)?,
            None => return Err("a list of any values".to_owned()),
        };
        let Some(options) = self.options(&items)? else {
            return Err(format!(
                "a list of {}",
                plural(&describe(&Value::Object(items)))
            ));
        };
        let min_items = s.get("minItems").and_then(Value::as_u64);
        let max_items = s.get("maxItems").and_then(Value::as_u64);
        let default = s.get("default").and_then(Value::as_array).and_then(|d| {
            d.iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        Ok(if options.iter().any(|o| o.label.is_some()) {
            PrimitiveSchema::TitledMultiSelect(TitledMultiSelectEnumSchema {
                title,
                description,
                min_items,
                max_items,
                items: TitledEnumItems {
                    any_of: options.into_iter().map(Choice::titled).collect(),
                    ..TitledEnumItems::default()
                },
                default,
                ..TitledMultiSelectEnumSchema::default()
            })
        } else {
            PrimitiveSchema::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
                title,
                description,
                min_items,
                max_items,
                items: UntitledEnumItems {
                    values: options.into_iter().map(|o| o.value).collect(),
                    ..UntitledEnumItems::default()
                },
                default,
                ..UntitledMultiSelectEnumSchema::default()
            })
        })
    }
}

/// One option of an enum, with the label a schema gives it (its `title`, else its
/// `description`)
struct Choice {
    value: String,
    label: Option<String>,
}

impl Choice {
    fn plain(value: String) -> Self {
        Self { value, label: None }
    }

    /// As a titled option: its label, or its value when it has none
    fn titled(self) -> EnumOption {
        let title = self.label.unwrap_or_else(|| self.value.clone());
        EnumOption::new(self.value, title)
    }
}

/// A single select: titled when any option has a label
fn single_select(
    title: Option<String>,
    description: Option<String>,
    options: Vec<Choice>,
    s: &Merged,
) -> PrimitiveSchema {
    let default = text(s, "default");
    if options.iter().any(|o| o.label.is_some()) {
        PrimitiveSchema::TitledSingleSelect(TitledSingleSelectEnumSchema {
            title,
            description,
            one_of: options.into_iter().map(Choice::titled).collect(),
            default,
            ..TitledSingleSelectEnumSchema::default()
        })
    } else {
        PrimitiveSchema::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
            title,
            description,
            values: options.into_iter().map(|o| o.value).collect(),
            default,
            ..UntitledSingleSelectEnumSchema::default()
        })
    }
}

/// Every value as a string; `Err` when one is not (a form's enums are strings), or when
/// there is none
fn strings(values: &[Value]) -> Result<Vec<String>, String> {
    if values.is_empty() {
        return Err(NO_OPTIONS.to_owned());
    }
    values
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "an enum of values that are not all strings".to_owned())
}

/// What an enum without values is
const NO_OPTIONS: &str = "an enum with no values to choose from";

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
}

fn text(s: &Merged, key: &str) -> Option<String> {
    s.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn number(s: &Merged, key: &str) -> Option<serde_json::Number> {
    match s.get(key) {
        Some(Value::Number(n)) => Some(n.clone()),
        _ => None,
    }
}

/// The string formats a form field may require
fn format(name: &str) -> Option<StringFormat> {
    Some(match name {
        "email" => StringFormat::Email,
        "uri" => StringFormat::Uri,
        "date" => StringFormat::Date,
        "date-time" => StringFormat::DateTime,
        _ => return None,
    })
}

/// What a schema describes, in words ("an object", "a list of strings", ...)
fn describe(schema: &Value) -> String {
    let Value::Object(s) = schema else {
        return match schema {
            Value::Bool(true) => "any JSON value".to_owned(),
            Value::Bool(false) => "a schema no value matches".to_owned(),
            other => format!("no schema ({other})"),
        };
    };
    match s.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "object" if s.contains_key("additionalProperties") && !s.contains_key("properties") => {
                "a map".to_owned()
            }
            "object" => "an object".to_owned(),
            "array" => match s.get("items") {
                Some(items) => format!("a list of {}", plural(&describe(items))),
                None => "a list".to_owned(),
            },
            "null" => "always null".to_owned(),
            "integer" => "an integer".to_owned(),
            other => format!("a {other}"),
        },
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            format!("one of several types ({})", names.join(", "))
        }
        _ if s.contains_key("properties") => "an object".to_owned(),
        _ if s.contains_key("oneOf") || s.contains_key("anyOf") || s.contains_key("allOf") => {
            "a union of schemas".to_owned()
        }
        _ if s.contains_key("$ref") => "a reference".to_owned(),
        _ => "any JSON value".to_owned(),
    }
}

/// "an object" -> "objects", "a list of strings" -> "lists of strings"
fn plural(words: &str) -> String {
    let bare = words
        .strip_prefix("an ")
        .or_else(|| words.strip_prefix("a "))
        .unwrap_or(words);
    match bare.split_once(' ') {
        Some((head, rest)) => format!("{head}s {rest}"),
        None if bare.ends_with('s') => bare.to_owned(),
        None => format!("{bare}s"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form(schema: Value) -> Value {
        let form = ElicitationSchema::from_json_schema(&schema).expect("a form");
        serde_json::to_value(form).expect("serializes")
    }

    fn refused(schema: Value) -> FormSchemaError {
        ElicitationSchema::from_json_schema(&schema).expect_err("no form")
    }

    /// What `schemars` 1 writes for a struct of every kind of form field (a string with a
    /// description, `u8`, an optional email, a URL with a length, a ranged `f64`, `i64`,
    /// `bool`, a renamed unit enum behind `$ref`, an optional documented enum, a list and a
    /// set of enums, a string with a default, `char`)
    fn schemars_contact() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Contact",
            "description": "A contact",
            "type": "object",
            "properties": {
                "age": {"type": "integer", "format": "uint8", "maximum": 255, "minimum": 0},
                "ch": {"type": "string", "maxLength": 1, "minLength": 1},
                "color": {"description": "The color", "$ref": "#/$defs/Color"},
                "colors": {"type": "array", "items": {"$ref": "#/$defs/Color"}},
                "dflt": {"type": "string", "default": "x"},
                "email": {"type": ["string", "null"], "format": "email"},
                "n": {"type": "integer", "format": "int64"},
                "name": {"description": "Your name", "type": "string"},
                "ok": {"type": "boolean"},
                "opt_bool": {"type": ["boolean", "null"]},
                "score": {"type": "number", "format": "double", "maximum": 5, "minimum": 1},
                "set": {"type": "array", "items": {"$ref": "#/$defs/Size"}, "uniqueItems": true},
                "site": {"type": "string", "format": "uri", "maxLength": 9, "minLength": 3},
                "size": {"anyOf": [{"$ref": "#/$defs/Size"}, {"type": "null"}]},
                "uuid": {"type": "string", "format": "uuid", "pattern": "^[0-9a-f-]+$"}
            },
            "required": ["name", "age", "site", "score", "n", "ok", "color", "colors", "set", "ch"],
            "$defs": {
                "Color": {"type": "string", "enum": ["red", "green"]},
                "Size": {"oneOf": [
                    {"type": "string", "enum": ["Medium", "Tiny"]},
                    {"description": "Small one", "type": "string", "const": "Small"},
                    {"title": "Big", "description": "Large one", "type": "string", "const": "Large"}
                ]}
            }
        })
    }

    #[test]
    fn a_schemars_struct_becomes_exactly_this_form() {
        let titled_size = json!([
            {"const": "Medium", "title": "Medium"},
            {"const": "Tiny", "title": "Tiny"},
            {"const": "Small", "title": "Small one"},
            {"const": "Large", "title": "Big"}
        ]);
        assert_eq!(
            form(schemars_contact()),
            json!({
                "type": "object",
                "properties": {
                    "age": {"type": "integer", "minimum": 0, "maximum": 255},
                    "ch": {"type": "string", "minLength": 1, "maxLength": 1},
                    "color": {"type": "string", "description": "The color", "enum": ["red", "green"]},
                    "colors": {"type": "array", "items": {"type": "string", "enum": ["red", "green"]}},
                    "dflt": {"type": "string", "default": "x"},
                    "email": {"type": "string", "format": "email"},
                    "n": {"type": "integer"},
                    "name": {"type": "string", "description": "Your name"},
                    "ok": {"type": "boolean"},
                    "opt_bool": {"type": "boolean"},
                    "score": {"type": "number", "minimum": 1, "maximum": 5},
                    "set": {"type": "array", "items": {"anyOf": titled_size}},
                    "site": {"type": "string", "format": "uri", "minLength": 3, "maxLength": 9},
                    "size": {"type": "string", "oneOf": titled_size},
                    "uuid": {"type": "string"}
                },
                "required": ["name", "age", "site", "score", "n", "ok", "color", "colors", "set", "ch"]
            })
        );
    }

    #[test]
    fn defaults_bounds_and_titles_are_kept_where_the_form_has_them() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "number", "title": "N", "default": 2.5, "minimum": -1},
                "b": {"type": "boolean", "title": "B", "default": true},
                "e": {"type": "string", "enum": ["x", "y"], "default": "y", "title": "E"},
                "m": {"type": "array", "minItems": 1, "maxItems": 2, "default": ["x"],
                      "items": {"type": "string", "enum": ["x", "y"]}},
                "d": {"type": "string", "format": "date", "default": null},
                "t": {"type": "string", "format": "date-time"},
                "one": {"type": "string", "const": "only"}
            }
        });
        assert_eq!(
            form(schema),
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "number", "title": "N", "default": 2.5, "minimum": -1},
                    "b": {"type": "boolean", "title": "B", "default": true},
                    "e": {"type": "string", "enum": ["x", "y"], "default": "y", "title": "E"},
                    "m": {"type": "array", "minItems": 1, "maxItems": 2, "default": ["x"],
                          "items": {"type": "string", "enum": ["x", "y"]}},
                    "d": {"type": "string", "format": "date"},
                    "t": {"type": "string", "format": "date-time"},
                    "one": {"type": "string", "enum": ["only"]}
                }
            })
        );
    }

    #[test]
    fn an_empty_struct_is_an_empty_form_and_old_style_definitions_resolve() {
        assert_eq!(
            form(json!({"title": "Empty", "type": "object"})),
            json!({"type": "object", "properties": {}})
        );
        let draft7 = json!({
            "type": "object",
            "properties": {"c": {"$ref": "#/definitions/C"}},
            "required": ["c", "gone"],
            "definitions": {"C": {"type": "string", "enum": ["a"]}}
        });
        assert_eq!(
            form(draft7),
            json!({"type": "object", "properties": {"c": {"type": "string", "enum": ["a"]}},
                   "required": ["c"]})
        );
    }

    fn field_error(field: &str, found: &str) -> FormSchemaError {
        FormSchemaError::Field {
            field: field.to_owned(),
            found: found.to_owned(),
        }
    }

    fn with_field(field: Value) -> Value {
        json!({
            "type": "object",
            "properties": {"ok": {"type": "string"}, "bad": field},
            "$defs": {
                "Addr": {"type": "object", "properties": {"street": {"type": "string"}}},
                "Loop": {"$ref": "#/$defs/Loop"},
                "Shape": {"oneOf": [
                    {"type": "object", "properties": {"circle": {"type": "number"}}},
                    {"type": "string", "const": "dot"}
                ]}
            }
        })
    }

    #[test]
    fn what_a_form_cannot_hold_is_refused_naming_the_field() {
        let cases = [
            (json!({"$ref": "#/$defs/Addr"}), "an object"),
            (
                json!({"type": "array", "items": {"type": "string"}}),
                "a list of strings",
            ),
            (
                json!({"type": "array", "items": {"$ref": "#/$defs/Addr"}}),
                "a list of objects",
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                "a map",
            ),
            (json!(true), "any JSON value"),
            (json!({}), "any JSON value"),
            (
                json!({"type": ["string", "integer"]}),
                "one of several types (string, integer)",
            ),
            (
                json!({"type": "integer", "enum": [1, 2]}),
                "an enum of values that are not all strings",
            ),
            (
                json!({"$ref": "#/$defs/Shape"}),
                "a union of an object, not of string constants",
            ),
            (
                json!({"$ref": "#/$defs/Nowhere"}),
                "a reference (\"#/$defs/Nowhere\") to a schema this one does not define",
            ),
            (json!({"$ref": "#/$defs/Loop"}), "a cycle of `$ref`s"),
            (
                json!({"anyOf": []}),
                "an enum with no values to choose from",
            ),
            (
                json!({"type": "string", "enum": []}),
                "an enum with no values to choose from",
            ),
        ];
        for (field, found) in cases {
            assert_eq!(
                refused(with_field(field.clone())),
                field_error("bad", found),
                "{field}"
            );
        }
        let message = refused(with_field(json!({"$ref": "#/$defs/Addr"}))).to_string();
        assert_eq!(
            message,
            "field `bad` is an object; an elicitation form takes only string, number, \
             integer, boolean and enum fields (and lists of an enum)"
        );
    }

    #[test]
    fn a_schema_that_is_no_object_of_fields_is_refused() {
        let not = |found: &str| FormSchemaError::NotAnObject {
            found: found.to_owned(),
        };
        assert_eq!(refused(json!({"type": "string"})), not("a string"));
        assert_eq!(
            refused(json!({"type": "object", "additionalProperties": {"type": "integer"}})),
            not("a map (it allows fields beyond its named properties)")
        );
        assert_eq!(
            refused(json!({"oneOf": [{"type": "string", "const": "a"}]})),
            not("a union of schemas")
        );
        // `deny_unknown_fields` is fine
        assert_eq!(
            form(json!({"type": "object", "additionalProperties": false,
                        "properties": {"a": {"type": "boolean"}}})),
            json!({"type": "object", "properties": {"a": {"type": "boolean"}}})
        );
    }
}
