//! Shared by the `schema_*` tests: the vendored spec schemas and validators built from them

#![allow(dead_code, unreachable_pub)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use mcp_sansio::ProtocolVersion;
use mcp_sansio::schema::meta;
use serde_json::{Value, json};

/// `shared/spec` beside the repository root
pub fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec")
}

fn load(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Which document a target lives in
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Doc {
    /// The core schema of a version
    Core(ProtocolVersion),
    /// The tasks extension (2026-07-28 only)
    ExtTasks,
}

/// One version's schema documents, with validators built on demand
pub struct Schemas {
    core: HashMap<ProtocolVersion, Value>,
    ext: Value,
    cache: HashMap<(Doc, String), jsonschema::Validator>,
}

impl Schemas {
    pub fn load() -> Self {
        let dir = spec_dir();
        let core = ProtocolVersion::ALL
            .into_iter()
            .map(|v| (v, load(&dir.join(v.as_str()).join("schema.json"))))
            .collect();
        let ext = load(&dir.join("ext-tasks/draft/schema.json"));
        Self {
            core,
            ext,
            cache: HashMap::new(),
        }
    }

    fn doc(&self, doc: Doc) -> &Value {
        match doc {
            Doc::Core(v) => &self.core[&v],
            Doc::ExtTasks => &self.ext,
        }
    }

    /// `definitions` (draft-07) or `$defs` (2020-12)
    pub fn defs_key(&self, doc: Doc) -> &'static str {
        if self.doc(doc).get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        }
    }

    /// The names of every definition of a document
    pub fn definitions(&self, doc: Doc) -> BTreeSet<String> {
        let key = self.defs_key(doc);
        self.doc(doc)[key]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    /// The JSON pointer of a definition, or `None` when the document lacks it
    pub fn pointer(&self, doc: Doc, name: &str, sub: &str) -> Option<String> {
        let p = format!("/{}/{name}{sub}", self.defs_key(doc));
        self.doc(doc).pointer(&p).map(|_| p)
    }

    /// Validates `instance` against the schema at `pointer` of `doc`; the errors as text
    pub fn validate(&mut self, doc: Doc, pointer: &str, instance: &Value) -> Result<(), String> {
        let key = (doc, pointer.to_owned());
        if !self.cache.contains_key(&key) {
            let mut root = self.doc(doc).clone();
            let obj = root.as_object_mut().unwrap();
            obj.insert("$ref".into(), Value::from(format!("#{pointer}")));
            let validator = jsonschema::validator_for(&root)
                .unwrap_or_else(|e| panic!("schema {doc:?} {pointer}: {e}"));
            self.cache.insert(key.clone(), validator);
        }
        let validator = &self.cache[&key];
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

/// Adds the `_meta` a modern session puts on every client request
pub fn add_session_meta(version: ProtocolVersion, params: &mut Value) {
    let m = params
        .as_object_mut()
        .expect("params are an object")
        .entry("_meta")
        .or_insert_with(|| json!({}));
    m[meta::PROTOCOL_VERSION] = Value::from(version.as_str());
    m[meta::CLIENT_CAPABILITIES] = json!({});
}
