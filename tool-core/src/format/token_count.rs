//! Token counts of tool schemas and tool results, with OpenAI's `o200k_base`
//! tokenizer (feature `tokens`).
//!
//! What an agent pays for tools is tokens: every request carries the rendered
//! tool list, and every result goes back into the context. This module counts
//! both with a real byte-pair encoder, so a change to a description or a
//! rendering can be measured instead of guessed.
//!
//! ```
//! use serde_json::json;
//! use tool_core::format::Format;
//! use tool_core::{tokens, ToolSpec};
//!
//! assert_eq!(tokens::count("hello world"), 2);
//!
//! let spec = ToolSpec::new(
//!     "echo",
//!     "Echo the text back.",
//!     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
//! );
//! let openai = tokens::schema_tokens(&spec, Format::OpenAiChat { strict: false })?;
//! let mcp = tokens::schema_tokens(&spec, Format::Mcp)?;
//! assert!(openai > 10 && mcp > 10);
//! # Ok::<(), tool_core::format::FormatError>(())
//! ```
//!
//! # What is counted, and how far it carries
//! - Text is encoded with `o200k_base` (the tokenizer of GPT-4o, GPT-4.1,
//!   GPT-5 and the `o` series), as ordinary text: a special-token string such as
//!   `<|endoftext|>` inside a description counts as the text it is.
//! - A JSON value is counted as its compact serialisation
//!   (`serde_json::to_string`, no spaces), the form clients send. Key order is
//!   the value's (the workspace builds `serde_json` with `preserve_order`).
//! - **Other providers' tokenizers differ.** Anthropic, Google and open models
//!   use their own vocabularies, and every provider wraps the tool list in its
//!   own prompt template (OpenAI turns functions into a TypeScript-like
//!   namespace, Anthropic adds a tool-use system prompt), which this count
//!   leaves out. Treat the figures as a stable yardstick for comparing
//!   schemas and renderings with each other, not as the provider's bill; for
//!   that, use the provider's own counting endpoint.
//!
//! # Dependency and why
//! `tiktoken-rs`: the Rust port of OpenAI's `tiktoken` with the BPE tables
//! built in (no download at run time), maintained and the most used
//! tokenizer crate for OpenAI encodings. The tables add about 3.6 MB to the
//! binary and take some tens of milliseconds to load on first use (once per
//! process), which is why the module sits behind the `tokens` cargo feature:
//! users who do not count tokens do not pay for it. The `tool` CLI turns it on.

use serde_json::Value;

use crate::format::{Format, FormatError, ToolCall, render_result, render_tool_with_fallback};
use crate::registry::history::Rendering;
use crate::result::ToolResult;
use crate::tool::spec::ToolSpec;

/// The name of the encoding every count in this module uses.
pub const ENCODING: &str = "o200k_base";

/// The formats `tool list --tokens` reports, one per provider family:
/// OpenAI Chat Completions (non-strict), Anthropic (non-strict), Gemini
/// (`parameters`, recursion refused) and MCP, with their column labels.
pub const PROVIDER_FORMATS: &[(&str, Format)] = &[
    ("openai", Format::OpenAiChat { strict: false }),
    ("anthropic", Format::Anthropic { strict: false }),
    (
        "gemini",
        Format::Gemini {
            recursion: crate::format::Recursion::Refuse,
        },
    ),
    ("mcp", Format::Mcp),
];

/// Tokens of `text` under `o200k_base`, special-token strings counted as
/// ordinary text. `count("") == 0`. Loads the tables on first use.
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text)
}

/// Tokens of `value`'s compact JSON serialisation (see the module docs).
pub fn count_json(value: &Value) -> usize {
    count(&value.to_string())
}

/// Tokens of one tool as rendered for `format`: the object that goes into the
/// request's tool list (for OpenAI Chat `{"type": "function", "function":
/// {...}}`, for Gemini one `FunctionDeclaration`), in the strictest form the
/// tool can take, as [`ToolRegistry::schemas_in`](crate::ToolRegistry::schemas_in)
/// renders it. The Gemini wrapper `[{"functionDeclarations": [...]}]` is
/// shared by all tools and not counted here.
///
/// # Errors
/// The [`FormatError`] of a tool that `format` cannot take even in its
/// looser form (an invalid name, a schema the target refuses).
pub fn schema_tokens(spec: &ToolSpec, format: Format) -> Result<usize, FormatError> {
    render_tool_with_fallback(spec, format).map(|(tool, _)| count_json(&tool))
}

/// Tokens of `result` as rendered for `format` in answer to `call`: the
/// provider's result message(s) from
/// [`render_result`], each counted as compact
/// JSON and summed (images count as their base64 text, which overstates
/// what providers charge for an image).
pub fn result_tokens(
    call: &ToolCall,
    result: &ToolResult,
    format: Format,
    rendering: Rendering,
) -> usize {
    render_result(call, result, format, rendering)
        .iter()
        .map(count_json)
        .sum()
}

/// Tokens of the model text of a result alone ([`ToolResult::render`]: the
/// output or error with its notes, or on later turns the long-term memory),
/// without any provider's envelope: what the result adds to the context in
/// any format, give or take the few tokens of wrapping.
pub fn result_text_tokens(result: &ToolResult, rendering: Rendering) -> usize {
    count(&result.render(rendering))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec::new(
            "read_file",
            "Read a file.",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "File to read."}},
                "required": ["path"]
            }),
        )
    }

    #[test]
    fn counts_known_strings() {
        // The counts tiktoken gives for o200k_base.
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        assert_eq!(count("<|endoftext|>"), 7, "special tokens are plain text");
        assert_eq!(count_json(&json!({"a": 1})), count("{\"a\":1}"));
    }

    #[test]
    fn schema_tokens_follow_the_rendering() {
        let spec = spec();
        for (label, format) in PROVIDER_FORMATS {
            let rendered = render_tool_with_fallback(&spec, *format).unwrap().0;
            let n = schema_tokens(&spec, *format).unwrap();
            assert_eq!(n, count(&rendered.to_string()), "{label}");
            assert!(
                n > count("Read a file.") + count("File to read."),
                "{label}: {n}"
            );
        }
        let longer = ToolSpec {
            description: "Read a file from the workspace, with line numbers.".into(),
            ..spec.clone()
        };
        let f = Format::OpenAiChat { strict: false };
        assert_eq!(
            schema_tokens(&longer, f).unwrap() - schema_tokens(&spec, f).unwrap(),
            count("Read a file from the workspace, with line numbers.") - count("Read a file."),
        );
    }

    #[test]
    fn bad_name_is_an_error() {
        let bad = ToolSpec {
            name: "no spaces allowed".into(),
            ..spec()
        };
        assert!(schema_tokens(&bad, Format::OpenAiChat { strict: false }).is_err());
    }

    #[test]
    fn result_tokens_count_the_envelope() {
        let call = ToolCall::new("call_1", "read_file", json!({"path": "a"}));
        let result = ToolResult::ok("one two three");
        let text = result_text_tokens(&result, Rendering::First);
        assert_eq!(text, count("one two three"));
        for (label, format) in PROVIDER_FORMATS {
            let n = result_tokens(&call, &result, *format, Rendering::First);
            assert!(n > text, "{label}: envelope adds tokens ({n} vs {text})");
        }
        let failed = ToolResult::failed("file not found: a");
        assert_eq!(
            result_text_tokens(&failed, Rendering::First),
            count(&failed.render(Rendering::First))
        );
        assert!(result_text_tokens(&failed, Rendering::First) >= count("file not found: a"));
        let once = ToolResult::ok("a long listing of many words").output_once();
        assert!(
            result_text_tokens(&once, Rendering::Later)
                != result_text_tokens(&once, Rendering::First)
        );
    }
}
