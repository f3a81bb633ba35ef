//! The course platforms' `results.json` schemas (`tests/gradescope/`, `tests/prairielearn/`, written from
//! each platform's specification) and a check of a value against them. Shared by the library's unit tests
//! of the formats (`crates/platforms/src/`) and the command's end-to-end tests.
#![allow(dead_code)]
use serde_json::Value;

/// Checks `value` against the schema's keywords this schema uses (type, required, properties,
/// additionalProperties, enum, items, minimum), and returns every violation with its path.
pub fn violations(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(kind) = schema["type"].as_str() {
        let ok = match kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_u64() || value.is_i64(),
            other => panic!("the schema uses a type this check does not know: {other}"),
        };
        if !ok {
            return vec![format!("{at}: expected {kind}, got {value}")];
        }
    }
    if let Some(options) = schema["enum"].as_array() {
        if !options.contains(value) {
            found.push(format!("{at}: {value} is not one of {options:?}"));
        }
    }
    if let Some(min) = schema["minimum"].as_f64() {
        if value.as_f64().is_some_and(|v| v < min) {
            found.push(format!("{at}: {value} is below {min}"));
        }
    }
    if let Some(max) = schema["maximum"].as_f64() {
        if value.as_f64().is_some_and(|v| v > max) {
            found.push(format!("{at}: {value} is above {max}"));
        }
    }
    if let Some(object) = value.as_object() {
        for key in schema["required"].as_array().into_iter().flatten() {
            if !object.contains_key(key.as_str().unwrap()) {
                found.push(format!("{at}: {key} is missing"));
            }
        }
        for (key, v) in object {
            match schema["properties"].get(key) {
                Some(s) => found.extend(violations(s, v, &format!("{at}.{key}"))),
                None if schema["additionalProperties"] == Value::Bool(false) => {
                    found.push(format!("{at}: {key} is not a field the platform reads"))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, v) in array.iter().enumerate() {
            found.extend(violations(items, v, &format!("{at}[{i}]")));
        }
    }
    found
}

/// Gradescope's schema.
pub fn schema() -> Value {
    schema_of("gradescope")
}

/// The schema of `platform` ("gradescope" or "prairielearn").
pub fn schema_of(platform: &str) -> Value {
    let root = std::path::Path::new(env!("ANATOMY_PROJECT_ROOT"));
    let text = std::fs::read_to_string(root.join(format!("tests/{platform}/results.schema.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}
