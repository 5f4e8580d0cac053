//! Doc text from `include_str!`, mixed with literal lines, for the fn and a parameter.
#![deny(warnings)]

use tool_core::{ToolRegistry, tool};

#[doc = include_str!("include_str_docs.md")]
///
/// Dictionary: Webster.
#[tool]
fn define(
    #[doc = concat!("The word", " to define.")]
    word: String,
) -> String {
    word
}

fn main() {
    let spec = ToolRegistry::global().get("define").unwrap().spec();
    assert_eq!(
        spec.description,
        "Look a word up in the dictionary.\n\nReturns the definition.\n\nDictionary: Webster."
    );
    assert_eq!(spec.parameters["properties"]["word"]["description"], "The word to define.");
}
