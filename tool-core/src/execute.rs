//! The execution pipeline: lookup → argument parsing → call with panic
//! containment, timeout and cancellation → result.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use crate::context::ToolContext;
use crate::registry::ToolRegistry;
use crate::result::{ErrorKind, ToolResult};

/// Longest excerpt of a model's value quoted back in an error message, in characters.
const QUOTE_LIMIT: usize = 200;

/// The arguments of a tool call: a parsed JSON value, or the raw text a provider returned.
///
/// Built with `From`/`Into` from `serde_json::Value`, a JSON object map,
/// `&str` or `String` (raw text, parsed by [`ToolRegistry::execute`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolArgs {
    /// Already-parsed JSON.
    Value(Value),
    /// Raw argument text, e.g. OpenAI's `function.arguments` string.
    Text(String),
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

impl ToolRegistry {
    /// Executes one tool call end to end and returns its result. Never panics
    /// on any input and never returns an `Err`: every failure is a
    /// [`ToolResult`] with an [`ErrorKind`] and a message the model can act on.
    ///
    /// - Unknown tool: `unknown_tool`, with up to three "did you mean" names.
    /// - Arguments that are not JSON, not an object, of a wrong type, missing
    ///   a required parameter or naming an unknown one: `invalid_arguments`
    ///   naming the parameter, the expected type and (cut to 200 characters)
    ///   what was sent.
    /// - A panic inside the tool: `panicked`, naming the tool; the panic
    ///   message goes to `tracing` (target `tool_core`), not to the model.
    /// - Timeout (the tool's `timeout`, else the context's, else the
    ///   registry's default of 120 s): the tool's future is dropped, `timeout`.
    /// - The context's cancellation token fires: the future is dropped, `cancelled`.
    ///
    /// Must run inside a Tokio runtime with the time driver enabled (the
    /// default for `#[tokio::main]`); sync tools run on its blocking pool.
    pub async fn execute(
        &self,
        name: &str,
        args: impl Into<ToolArgs>,
        ctx: &ToolContext,
    ) -> ToolResult {
        let Some(tool) = self.get(name) else {
            return unknown_tool(self, name);
        };
        let args = match parse_arguments(name, args.into()) {
            Ok(map) => map,
            Err(result) => return result,
        };
        let timeout = tool
            .spec()
            .timeout
            .or_else(|| ctx.timeout())
            .unwrap_or(self.default_timeout);
        let start = std::panic::catch_unwind(AssertUnwindSafe(|| tool.start(args, ctx.clone())));
        let future = match start {
            Ok(f) => AssertUnwindSafe(f).catch_unwind(),
            Err(payload) => return panicked(name, payload.as_ref()),
        };
        let cancel = ctx.cancellation_token();
        tokio::select! {
            biased;
            outcome = tokio::time::timeout(timeout, future) => match outcome {
                Ok(Ok(result)) => result,
                Ok(Err(payload)) => panicked(name, payload.as_ref()),
                Err(_) => timed_out(name, timeout),
            },
            () = cancel.cancelled() => ToolResult::error(
                ErrorKind::Cancelled,
                format!("The call to `{name}` was cancelled before it finished."),
            ),
        }
    }
}

fn unknown_tool(registry: &ToolRegistry, name: &str) -> ToolResult {
    let suggestions = registry.suggest(name);
    let mut message = format!("Unknown tool `{}`.", quote(name));
    if suggestions.is_empty() {
        let names = registry.names();
        if names.len() <= 30 {
            message.push_str(&format!(" Available tools: {}.", names.join(", ")));
        }
    } else {
        message.push_str(&format!(" Did you mean {}?", join_or(&suggestions)));
    }
    ToolResult::error(ErrorKind::UnknownTool, message)
}

fn join_or(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn parse_arguments(tool: &str, args: ToolArgs) -> Result<Map<String, Value>, ToolResult> {
    let value = match args {
        ToolArgs::Value(v) => v,
        ToolArgs::Text(text) => serde_json::from_str::<Value>(&text).map_err(|e| {
            ToolResult::error(
                ErrorKind::InvalidArguments,
                format!(
                    "The arguments for `{tool}` are not valid JSON ({e}). Send one JSON object such as {{\"name\": value}}. Received: {}",
                    quote(&text)
                ),
            )
        })?,
    };
    match value {
        Value::Object(map) => Ok(map),
        other => Err(ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "The arguments for `{tool}` must be a JSON object such as {{\"name\": value}}; received {} {}.",
                json_kind(&other),
                quote(&other.to_string())
            ),
        )),
    }
}

fn panicked(tool: &str, payload: &(dyn Any + Send)) -> ToolResult {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<non-string panic payload>".to_owned());
    tracing::error!(target: "tool_core", tool, panic = %detail, "tool panicked; the panic was contained");
    ToolResult::error(
        ErrorKind::Panicked,
        format!(
            "The tool `{tool}` crashed with an internal error and returned no result. Do not retry the same call; try another approach."
        ),
    )
}

fn timed_out(tool: &str, timeout: Duration) -> ToolResult {
    ToolResult::error(
        ErrorKind::Timeout,
        format!(
            "The call to `{tool}` did not finish within {} and was stopped. Try a smaller request.",
            human_duration(timeout)
        ),
    )
}

fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// Cuts `text` to [`QUOTE_LIMIT`] characters (never inside a character), marking the cut.
pub(crate) fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
    }
}

/// "a string", "an integer", … for messages.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What JSON a Rust type expects, for messages ("an integer", "an array of …").
fn expected_json(rust_type: &str) -> String {
    let t: String = rust_type.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = t
        .strip_prefix("Option<")
        .and_then(|s| s.strip_suffix('>'))
        .unwrap_or(&t);
    let head = inner.split('<').next().unwrap_or(inner);
    let head = head.rsplit("::").next().unwrap_or(head);
    let kind = match head {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "an integer",
        "NonZeroU8" | "NonZeroU16" | "NonZeroU32" | "NonZeroU64" | "NonZeroUsize" => {
            "a positive integer"
        }
        "f32" | "f64" => "a number",
        "bool" => "a boolean",
        "String" | "str" | "&str" | "char" | "PathBuf" | "Url" => "a string",
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => "an array",
        "HashMap" | "BTreeMap" | "Map" => "an object",
        _ => return format!("a value of type `{rust_type}`"),
    };
    format!("{kind} (`{rust_type}`)")
}

/// The error for a parameter whose JSON did not deserialise.
pub(crate) fn bad_parameter(
    tool: &str,
    param: &str,
    rust_type: &str,
    sent: &Value,
    error: &serde_json::Error,
) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Invalid value for parameter `{param}` of `{tool}`: expected {}, but received {} {}. ({error})",
            expected_json(rust_type),
            json_kind(sent),
            quote(&sent.to_string())
        ),
    )
}

/// The error for a missing required parameter.
pub(crate) fn missing_parameter(tool: &str, param: &str, rust_type: &str) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Missing required parameter `{param}` of `{tool}`: expected {}.",
            expected_json(rust_type)
        ),
    )
}

/// The error for parameters the tool does not have.
pub(crate) fn unknown_parameters(tool: &str, unknown: &[&str], valid: &[&str]) -> ToolResult {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{}`", quote(n)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (noun, verb) = if unknown.len() == 1 {
        ("parameter", "is")
    } else {
        ("parameters", "are")
    };
    let valid_text = if valid.is_empty() {
        format!("`{tool}` takes no parameters.")
    } else {
        format!("Valid parameters: {}.", list(valid))
    };
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Unknown {noun} {} {verb} not accepted by `{tool}`. {valid_text}",
            list(unknown)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_cuts_on_char_boundary() {
        let s = "é".repeat(300);
        let q = quote(&s);
        assert!(q.starts_with(&"é".repeat(200)));
        assert!(q.ends_with("(200 more bytes)"));
    }

    #[test]
    fn expected_json_names_kinds() {
        assert_eq!(expected_json("u32"), "an integer (`u32`)");
        assert_eq!(
            expected_json("Option<Vec<String>>"),
            "an array (`Option<Vec<String>>`)"
        );
        assert_eq!(expected_json("MyType"), "a value of type `MyType`");
    }
}
