//! [`Provider`]: one provider format as a table entry, so that [`Format`]
//! dispatches through one `match` ([`Format::provider`]) and a new provider
//! is its own file (exporting one `static` of this type) plus one line there.

use serde_json::Value;

use super::call::ToolCall;
use super::error::{CallParseError, FallbackForm};
use super::reply::Reply;
use super::{Format, Pipeline, Recursion, ServerSearch};
use crate::tool::spec::ToolSpec;

/// What a provider file exports: everything [`Format`] needs to render
/// tools, read calls and render results for that provider.
pub(crate) struct Provider {
    /// The command-line name of the plain variant (`openai-chat`); a strict
    /// variant adds `-strict`, an unrolling one `-unroll-<levels>`.
    pub(crate) slug: &'static str,
    /// The name people read (`OpenAI Chat Completions`); a strict variant adds ` (strict)`.
    pub(crate) title: &'static str,
    /// JSON Pointer to the parameters schema inside one rendered tool.
    pub(crate) parameters_pointer: &'static str,
    /// Lowering and validation of the parameters schema (`None`: the canonical schema as is).
    pub(crate) plain: Option<&'static Pipeline>,
    /// The strict-mode pipeline, for providers that have one.
    pub(crate) strict: Option<&'static Pipeline>,
    /// One rendered tool from the spec and its lowered parameters; the flag
    /// says whether strict mode applies.
    pub(crate) render_tool: fn(&ToolSpec, Value, bool) -> Value,
    /// The form a tool falls back to when it cannot take the strictest one.
    pub(crate) looser: Looser,
    /// The request's tool-list value made of rendered tools.
    pub(crate) tool_list: fn(Vec<Value>) -> Value,
    /// Every tool call in a provider payload (see [`ToolCall::parse`]).
    pub(crate) parse_calls: fn(&Value) -> Result<Vec<ToolCall>, CallParseError>,
    /// The result message(s) answering one call.
    /// The result message(s) of one call; the `usize` is the base64 characters
    /// of media already admitted into the same request (see `attachments`).
    pub(crate) render_result: fn(&ToolCall, &Reply<'_>, &mut usize) -> Vec<Value>,
    /// For a provider whose variant takes [`Recursion`]: the format that
    /// unrolls `n` levels (the slug `<slug>-unroll-<n>`).
    pub(crate) unrolled: Option<fn(u8) -> Format>,
}

/// A provider's looser form (see [`render_tool_with_fallback`](super::render_tool_with_fallback)).
#[derive(Clone, Copy)]
pub(crate) enum Looser {
    /// None: a tool that cannot be rendered is an error.
    None,
    /// The same provider without strict mode.
    NonStrict,
    /// Another format's rendering, recorded as `form`.
    Format(Format, FallbackForm),
}

/// The parameters of a [`Format`] variant.
#[derive(Clone, Copy)]
pub(crate) struct Variant {
    /// `Some(strict)` for the variants with a `strict` flag.
    pub(crate) strict: Option<bool>,
    /// `Some` for the variants that take a [`Recursion`].
    pub(crate) recursion: Option<Recursion>,
    /// `Some` for [`Format::AnthropicToolSearch`]: the server tool ending the list.
    pub(crate) server_search: Option<ServerSearch>,
}

impl Variant {
    /// No parameters.
    pub(crate) const PLAIN: Self = Self {
        strict: None,
        recursion: None,
        server_search: None,
    };

    /// A `strict` flag.
    pub(crate) const fn strict(strict: bool) -> Self {
        Self {
            strict: Some(strict),
            recursion: None,
            server_search: None,
        }
    }
}
