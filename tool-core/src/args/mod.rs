//! A call's arguments, from what the provider sent to the object the tool
//! reads: [`ToolArgs`], the recorded [repairs](repair) of well-known
//! malformations, strict mode's "`null` means absent"
//! ([`normalize_arguments`]) and every argument-error message.
//!
//! A leaf module: it imports no other part of the pipeline (`execute`,
//! `format`, `registry`), which all import it.

use serde_json::{Map, Value};

pub(crate) mod decode;
pub(crate) mod messages;
mod normalize;
pub mod repair;
pub(crate) mod schema;
pub(crate) mod validate;

pub use messages::json_kind;
pub use normalize::normalize_arguments;
pub use repair::{ArgumentRepair, RepairKind, takes_only_text};

/// The arguments of a tool call: a parsed JSON value, or the raw text a provider returned.
///
/// Built with `From`/`Into` from `serde_json::Value`, a JSON object map,
/// `&str` or `String` (raw text, parsed by [`ToolRegistry::execute`](crate::ToolRegistry::execute)).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolArgs {
    /// Already-parsed JSON.
    Value(Value),
    /// Raw argument text, e.g. OpenAI's `function.arguments` string.
    Text(String),
}

/// The arguments as the model sent them: parsed JSON as compact JSON text
/// (`{"path":"a.txt"}`, key order kept), raw text unchanged (even when it is
/// not valid JSON), so a log line shows exactly what arrived. No length limit:
/// clip a long value before showing it to a model.
impl std::fmt::Display for ToolArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Value(v) => write!(f, "{v}"),
            Self::Text(t) => f.write_str(t),
        }
    }
}

impl From<Value> for ToolArgs {
    fn from(v: Value) -> Self {
        Self::Value(v)
    }
}

impl From<Map<String, Value>> for ToolArgs {
    fn from(m: Map<String, Value>) -> Self {
        Self::Value(Value::Object(m))
    }
}

impl From<&str> for ToolArgs {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<String> for ToolArgs {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<&String> for ToolArgs {
    fn from(s: &String) -> Self {
        Self::Text(s.clone())
    }
}
