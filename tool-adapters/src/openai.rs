//! Our tools with [async-openai](https://docs.rs/async-openai/0.43.0)'s Chat
//! Completions types (feature `async-openai`), both directions.
//!
//! | from | to | function |
//! |---|---|---|
//! | a registry or view | `Vec<ChatCompletionTools>` (a request's `tools`) | [`chat_tools`] |
//! | `ChatCompletionTool` | our canonical schema `{"name", "description", "parameters"}` | [`canonical_schema`] |
//! | `ChatCompletionMessageToolCalls` (a response's `tool_calls`) | our [`ToolCall`]s | [`tool_calls`] |
//! | our [`ToolCall`] | `ChatCompletionMessageToolCall` (the assistant message of the history) | [`openai_tool_call`] |
//! | our [`ToolResult`] | `ChatCompletionRequestMessage`s (a `tool` message, then a `user` message with the images, if any) | [`tool_messages`] |
//! | `ChatCompletionRequestToolMessage` | a [`ToolCall`] id and a [`ToolResult`] | [`tool_result`] |
//!
//! Every conversion goes through our own OpenAI Chat rendering
//! ([`Format::OpenAiChat`]): the schemas are what
//! [`RegistryView::schemas_in`] renders (strict or not, with its named
//! lowering steps and validator), the results what
//! [`render_result`] renders (the
//! two-layer memory rule, `(no output)` for an empty text, images in a
//! following `user` message since OpenAI's tool messages take text only). So
//! `serde_json::to_value(chat_tools(..))` equals our rendering byte for byte,
//! and a request built with these types is the request our own agent sends.
//!
//! Calls are not executed here: [`tool_calls`] gives [`ToolCall`]s for
//! [`RegistryView::execute_calls`] / [`RegistryView::execute_call`], which
//! run the whole pipeline (repairs of the argument text included: the
//! `arguments` string is passed as the model wrote it).
//!
//! ```
//! use tool_core::{RegistryView, ToolRegistry};
//!
//! let view = RegistryView::new(ToolRegistry::new());
//! let tools = tool_adapters::openai::chat_tools(&view, false).unwrap();
//! assert!(tools.is_empty());
//! ```

use std::fmt;

use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionRequestMessage,
    ChatCompletionRequestToolMessage, ChatCompletionRequestToolMessageContent,
    ChatCompletionRequestToolMessageContentPart, ChatCompletionTool, ChatCompletionTools,
    FunctionCall,
};
use serde_json::{Value, json};
use tool_core::format::{RenderError, render_result};
use tool_core::{Format, RegistryView, Rendering, ToolArgs, ToolCall, ToolResult};

/// Why a conversion failed. Each message names the tool or call and says
/// what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum AdapterError {
    /// Some tools could not be rendered for OpenAI Chat (e.g. a name over 64
    /// characters): our renderer's error, listing each tool and the rule.
    Render(RenderError),
    /// Our rendering did not read as async-openai's type: a version of
    /// async-openai whose types lag the API. `what` names the value.
    Shape {
        /// What was being converted (`"tool list"`, `"tool message of call_1"`).
        what: String,
        /// serde's message, with the JSON path.
        source: serde_json::Error,
    },
    /// A custom tool call (`"type": "custom"`, free text input): our tools
    /// are function tools, so no tool of ours can take it.
    CustomToolCall {
        /// The call's id.
        id: String,
        /// The custom tool's name.
        name: String,
    },
}

impl fmt::Display for AdapterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Render(e) => write!(f, "cannot render the tools for OpenAI Chat: {e}"),
            Self::Shape { what, source } => write!(
                f,
                "the {what} does not read as async-openai's type ({source}); \
                 update async-openai or report the tool"
            ),
            Self::CustomToolCall { id, name } => write!(
                f,
                "call {id} is a custom tool call to `{name}`; these tools are function tools \
                 (send them as `type: function`)"
            ),
        }
    }
}

impl std::error::Error for AdapterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Render(e) => Some(e),
            Self::Shape { source, .. } => Some(source),
            Self::CustomToolCall { .. } => None,
        }
    }
}

/// The request's `tools` for every tool `view` lists, as
/// [`RegistryView::schemas_in`]`(Format::OpenAiChat { strict })` renders
/// them (tools that cannot take strict mode fall back to non-strict, as
/// there), in async-openai's type.
///
/// # Errors
///
/// [`AdapterError::Render`] when a tool cannot be rendered at all;
/// [`AdapterError::Shape`] if async-openai cannot read our rendering.
pub fn chat_tools(
    view: &RegistryView,
    strict: bool,
) -> Result<Vec<ChatCompletionTools>, AdapterError> {
    let rendered = view
        .schemas_in(Format::OpenAiChat { strict })
        .map_err(AdapterError::Render)?;
    serde_json::from_value(rendered.into_value()).map_err(|source| AdapterError::Shape {
        what: "tool list".to_owned(),
        source,
    })
}

/// async-openai's function tool as our canonical schema:
/// `{"name", "description", "parameters"}` (`description` `""` when absent;
/// `parameters`, when absent, the schema of an object with no properties,
/// derived from an empty struct, as the API reads an absent one: "omitting
/// `parameters` defines a function with an empty parameter list"). A strict rendering's lowered parameters stay
/// lowered (every property required, `additionalProperties: false`).
pub fn canonical_schema(tool: &ChatCompletionTool) -> Value {
    let function = &tool.function;
    json!({
        "name": function.name,
        "description": function.description.clone().unwrap_or_default(),
        "parameters": function.parameters.clone()
            .unwrap_or_else(no_parameters),
    })
}

/// The parameters schema of a function without parameters: the JSON Schema
/// of [`NoParameters`] (an object, no properties, nothing else allowed),
/// without the `title` schemars adds.
fn no_parameters() -> Value {
    let mut schema = schemars::schema_for!(NoParameters).to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    schema
}

/// The arguments of a function that takes none.
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
struct NoParameters {}

/// A response's `tool_calls` as our [`ToolCall`]s, in order: the id, the
/// function name and the `arguments` text as the model wrote it (our
/// pipeline parses and repairs it).
///
/// # Errors
///
/// [`AdapterError::CustomToolCall`] for a custom tool call.
pub fn tool_calls(calls: &[ChatCompletionMessageToolCalls]) -> Result<Vec<ToolCall>, AdapterError> {
    calls
        .iter()
        .map(|call| match call {
            ChatCompletionMessageToolCalls::Function(f) => Ok(tool_call(f)),
            ChatCompletionMessageToolCalls::Custom(c) => Err(AdapterError::CustomToolCall {
                id: c.id.clone(),
                name: c.custom_tool.name.clone(),
            }),
        })
        .collect()
}

/// One function call as our [`ToolCall`] (id, name, raw argument text).
pub fn tool_call(call: &ChatCompletionMessageToolCall) -> ToolCall {
    ToolCall::new(
        call.id.clone(),
        call.function.name.clone(),
        call.function.arguments.clone(),
    )
}

/// Our [`ToolCall`] as async-openai's function call, for the assistant
/// message that goes back into the history: the arguments as JSON text
/// (a parsed value is serialised compactly; raw text is kept as written).
pub fn openai_tool_call(call: &ToolCall) -> ChatCompletionMessageToolCall {
    let arguments = match &call.arguments {
        ToolArgs::Text(text) => text.clone(),
        ToolArgs::Value(value) => value.to_string(),
    };
    ChatCompletionMessageToolCall {
        id: call.id.clone(),
        function: FunctionCall {
            name: call.name.clone(),
            arguments,
        },
    }
}

/// The messages to append after the assistant message for `result`, the
/// answer to `call`: the `tool` message (`tool_call_id`, the text), then,
/// when the result has images or files, a `user` message with them (OpenAI's
/// tool messages take text only). `rendering` is [`Rendering::First`] on the
/// turn the result was produced, [`Rendering::Later`] when replaying history
/// (an output-once result then shows its long-term memory). What
/// [`render_result`] renders for [`Format::OpenAiChat`], in async-openai's type.
///
/// # Errors
///
/// [`AdapterError::Shape`] if async-openai cannot read our rendering.
pub fn tool_messages(
    call: &ToolCall,
    result: &ToolResult,
    rendering: Rendering,
) -> Result<Vec<ChatCompletionRequestMessage>, AdapterError> {
    render_result(
        call,
        result,
        Format::OpenAiChat { strict: false },
        rendering,
    )
    .into_iter()
    .map(|message| {
        serde_json::from_value(message).map_err(|source| AdapterError::Shape {
            what: format!("tool message of {}", call.id),
            source,
        })
    })
    .collect()
}

/// A tool message read back: the call id it answers and a [`ToolResult`]
/// whose output is the message's text (text parts joined with no
/// separator, as the API reads them). Whether the call failed is not part of
/// an OpenAI tool message, so the result is always a success; notes,
/// metadata and images (which travel in a separate `user` message) are not
/// recovered.
pub fn tool_result(message: &ChatCompletionRequestToolMessage) -> (String, ToolResult) {
    let text = match &message.content {
        ChatCompletionRequestToolMessageContent::Text(text) => text.clone(),
        ChatCompletionRequestToolMessageContent::Array(parts) => parts
            .iter()
            .map(|part| match part {
                ChatCompletionRequestToolMessageContentPart::Text(t) => t.text.as_str(),
            })
            .collect(),
    };
    (message.tool_call_id.clone(), ToolResult::ok(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_openai::types::chat::FunctionObject;

    #[test]
    fn absent_parameters_read_as_an_empty_object_schema() {
        let tool = ChatCompletionTool {
            function: FunctionObject {
                name: "ping".to_owned(),
                description: None,
                parameters: None,
                strict: None,
            },
        };
        let schema = canonical_schema(&tool);
        assert_eq!(schema["name"], "ping");
        assert_eq!(schema["description"], "");
        assert_eq!(schema["parameters"]["type"], "object");
        assert_eq!(schema["parameters"]["additionalProperties"], false);
        assert!(schema["parameters"].get("title").is_none());
    }
}
