//! JSON from outside, read for the few values wanted and nothing more.
//!
//! A `serde_json::Value` builds every object it reads: 15 MB of small objects took 1.1 GiB. Read into
//! these types instead, serde_json skips what is not wanted without building it (an unknown key, a value
//! of the wrong kind), so that reading costs the file's bytes and the values kept. What is skipped,
//! serde_json skips in a loop with a byte of its own per level, so no nesting reaches the stack.
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One value, kept when it is text, a number or a boolean, and otherwise only named, so that a refusal can
/// say what was there instead.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Scalar {
    /// The key was not there.
    #[default]
    Missing,
    Null,
    Text(String),
    Bool(bool),
    /// A number, as serde_json reads it back.
    Number(String),
    /// An object or a list, not kept.
    Nested(&'static str),
}

impl Scalar {
    /// The text, when it is text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Scalar::Text(t) => Some(t),
            _ => None,
        }
    }

    /// What it is, for a refusal: `the number 12345`, `an object`, `"soon"`.
    pub fn shown(&self) -> String {
        match self {
            Scalar::Missing => "missing".into(),
            Scalar::Null => "null".into(),
            Scalar::Text(t) => format!("{:?}", t.chars().take(64).collect::<String>()),
            Scalar::Bool(b) => format!("the boolean {b}"),
            Scalar::Number(n) => format!("the number {n}"),
            Scalar::Nested(what) => (*what).into(),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Number(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Text(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Text(v))
    }
    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Nested("a list"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Nested("an object"))
    }
}

/// An object read as `T` when it is one; any other value is skipped and read as `None`, as a `Value`'s
/// reader would find nothing in it.
#[derive(Debug)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(PhantomData))
    }
}

struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Lenient(Some(t)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        ScalarVisitor.visit_seq(seq).map(|_| Lenient(None))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct Sample {
        #[serde(default)]
        a: Scalar,
        #[serde(default)]
        inner: Lenient<Inner>,
    }

    #[derive(serde::Deserialize, Debug)]
    struct Inner {
        #[serde(default)]
        b: Scalar,
    }

    #[test]
    fn wanted_values_are_kept_and_everything_else_is_named_or_skipped() {
        let read = |text: &str| serde_json::from_str::<Sample>(text).unwrap();
        let w = read(r#"{"a": "x", "inner": {"b": 5, "c": [1, {"d": 2}]}, "other": {"e": [[]]}}"#);
        assert_eq!((w.a.text(), w.inner.0.unwrap().b), (Some("x"), Scalar::Number("5".into())));
        let w = read(r#"{"a": [1, 2], "inner": [1]}"#);
        assert_eq!((w.a.shown(), w.inner.0.is_none()), ("a list".into(), true));
        let w = read(r#"{"a": {"x": 1}, "inner": "text"}"#);
        assert_eq!((w.a.shown(), w.inner.0.is_none()), ("an object".into(), true));
        let w = read("{}");
        assert_eq!((w.a, w.inner.0.is_none()), (Scalar::Missing, true));
        assert_eq!([read(r#"{"a": null}"#).a.shown(), read(r#"{"a": true}"#).a.shown()], ["null", "the boolean true"]);
        assert_eq!(read(r#"{"a": 1.5}"#).a.shown(), "the number 1.5");
        // What is skipped is skipped without recursion, however deep.
        let deep = format!(
            "{{\"a\": {}{}, \"inner\": {}{}}}",
            "[".repeat(1 << 20),
            "]".repeat(1 << 20),
            "[".repeat(1 << 20),
            "]".repeat(1 << 20)
        );
        let w = serde_json::from_str::<Sample>(&deep).unwrap();
        assert_eq!((w.a.shown(), w.inner.0.is_none()), ("a list".into(), true));
    }
}
