//! Tools in modules and fn bodies, raw identifiers as names, and a fn that
//! stays an ordinary fn for its callers.
#![deny(warnings)]
#![allow(deprecated, reason = "parameters left undocumented on purpose: #[tool] warns of each")]

use tool_core::{ToolRegistry, tool};

mod tools {
    use tool_core::tool;

    /// The type of a value, as a tool named `type`.
    #[tool]
    pub fn r#type(value: serde_json::Value) -> &'static str {
        match value {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "bool",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
        }
    }
}

/// Shout a word.
#[tool]
pub(crate) fn shout(word: String) -> String {
    word.to_uppercase()
}

fn main() {
    /// Whisper a word (a tool declared in a fn body).
    #[tool]
    fn whisper(word: String) -> String {
        word.to_lowercase()
    }

    assert_eq!(tools::r#type(serde_json::json!([])), "array");
    assert_eq!(shout("a".into()), "A");
    assert_eq!(whisper("A".into()), "a");
    let registry = ToolRegistry::global();
    for name in ["type", "shout", "whisper"] {
        assert!(registry.contains(name), "{name} registered");
    }
    assert_eq!(registry.get("type").unwrap().spec().parameter_names(), ["value"]);
}
