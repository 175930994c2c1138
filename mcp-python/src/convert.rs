//! Python objects <-> JSON: dicts, lists, strings, numbers, booleans and `None`

use mcp_sansio::ListKind;
use mcp_sansio::uri_template::{TemplateValue, Variables};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

/// How deep a Python structure may nest before it is refused (cycles end here too)
const MAX_DEPTH: usize = 128;

/// A Python value as JSON; `TypeError` for anything that is not plain JSON data
pub(crate) fn to_json(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_json_at(obj, 0)
}

fn to_json_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(
            "JSON data nests too deep (or has a cycle)",
        ));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        return Err(PyValueError::new_err("integer out of the JSON range"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err(format!("{v} is not a JSON number")));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("JSON object keys must be str"))?
                .to_cow()?
                .into_owned();
            map.insert(key, to_json_at(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        let mut items = Vec::with_capacity(l.len());
        for v in l.iter() {
            items.push(to_json_at(&v, depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let mut items = Vec::with_capacity(t.len());
        for v in t.iter() {
            items.push(to_json_at(&v, depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{} is not JSON data (use dict, list, str, int, float, bool or None)",
        obj.get_type().name()?
    )))
}

/// A JSON value as Python data
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// Raw JSON text (as the core keeps params and results) as Python data
pub(crate) fn raw_to_py<'py>(py: Python<'py>, raw: &RawValue) -> PyResult<Bound<'py, PyAny>> {
    let value: Value = serde_json::from_str(raw.get())
        .map_err(|e| PyValueError::new_err(format!("invalid JSON from the core: {e}")))?;
    to_py(py, &value)
}

/// Optional raw JSON as Python data (`None` when absent)
pub(crate) fn opt_raw_to_py<'py>(
    py: Python<'py>,
    raw: Option<&RawValue>,
) -> PyResult<Bound<'py, PyAny>> {
    match raw {
        Some(raw) => raw_to_py(py, raw),
        None => Ok(py.None().into_bound(py)),
    }
}

/// A Python value (a dict, for params and results) as raw JSON text
pub(crate) fn to_raw(obj: &Bound<'_, PyAny>) -> PyResult<Box<RawValue>> {
    let value = to_json(obj)?;
    serde_json::value::to_raw_value(&value)
        .map_err(|e| PyValueError::new_err(format!("cannot encode JSON: {e}")))
}

/// Decodes Python data as a typed schema value; `ValueError` saying what does not fit
pub(crate) fn from_py<T: serde::de::DeserializeOwned>(
    obj: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<T> {
    serde_json::from_value(to_json(obj)?)
        .map_err(|e| PyValueError::new_err(format!("invalid {what}: {e}")))
}

/// A typed schema value as Python data
pub(crate) fn typed_to_py<'py, T: serde::Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(value)
        .map_err(|e| PyValueError::new_err(format!("cannot encode JSON: {e}")))?;
    to_py(py, &value)
}

/// A request header value as the front end passes it: `str`, or `bytes` as received (the
/// rules answer 400 for bytes that are not UTF-8)
#[derive(FromPyObject)]
pub(crate) enum FieldValue {
    Text(String),
    Raw(Vec<u8>),
}

impl FieldValue {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Text(t) => t.as_bytes(),
            Self::Raw(b) => b,
        }
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self {
            Self::Text(t) => t.into_bytes(),
            Self::Raw(b) => b,
        }
    }
}

/// A list kind from its name
pub(crate) fn list_kind(kind: &str) -> PyResult<ListKind> {
    match kind {
        "tools" => Ok(ListKind::Tools),
        "prompts" => Ok(ListKind::Prompts),
        "resources" => Ok(ListKind::Resources),
        other => Err(PyValueError::new_err(format!(
            "unknown list {other:?} (tools, prompts or resources)"
        ))),
    }
}

/// A URI template's variables as a dict (a list or a map where the template says so)
pub(crate) fn variables_to_py<'py>(
    py: Python<'py>,
    variables: &Variables,
) -> PyResult<Bound<'py, PyAny>> {
    let vars = PyDict::new(py);
    for (name, value) in variables.iter() {
        match value {
            TemplateValue::String(s) => vars.set_item(name, s)?,
            TemplateValue::List(l) => vars.set_item(name, l)?,
            TemplateValue::Map(m) => vars.set_item(name, m.clone())?,
            _ => {}
        }
    }
    Ok(vars.into_any())
}
