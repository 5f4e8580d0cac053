//! Provider formats: one tool definition rendered for OpenAI (incl. strict
//! mode), Anthropic, Gemini and MCP; provider tool calls read into
//! [`ToolCall`]s; [`ToolResult`]s rendered as each provider's result message.
//!
//! Each tool's canonical schema (JSON Schema 2020-12, see [`ToolSpec::parameters`])
//! is lowered per target by a pipeline of small named steps (inline `$ref`s,
//! close objects, make optional fields nullable, …) and then checked by the
//! target's validator. A tool that cannot be lowered for a target fails with a
//! [`FormatError`] naming the JSON path, the provider [`Rule`] and its
//! source; the other targets still work. Renderings are cached per registry
//! and format ([`ToolRegistry::schemas_in`](crate::ToolRegistry::schemas_in)).
//!
//! One tool never stops a registry from rendering: where the provider lets
//! each tool choose its form, a tool that cannot take the strictest one is
//! rendered in the next one ([`render_tool_with_fallback`]) and the
//! [`Fallback`] is recorded on the rendering ([`ToolSchemas::fallbacks`]):
//! OpenAI and Anthropic strict mode → that one function without `strict`
//! (both APIs set strict mode per function); Gemini `parameters` → that one
//! declaration with `parametersJsonSchema` (the API takes either field per
//! `FunctionDeclaration`). [`OnRefusal::Refuse`] keeps such tools out and
//! reports them as errors instead.
//!
//! ```
//! use serde_json::{json, Map, Value};
//! use tool_core::format::{render_result, Format, ToolCall};
//! use tool_core::{Rendering, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let spec = ToolSpec::new(
//!     "search_notes",
//!     "Search the user's notes.",
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "query": {"type": "string"},
//!             "limit": {"type": "integer", "format": "uint32", "minimum": 0, "default": 10}
//!         },
//!         "required": ["query"],
//!         "additionalProperties": false
//!     }),
//! );
//! let tool = Tool::new(spec, |args: Map<String, Value>, _ctx| async move {
//!     ToolResult::ok(format!("searched {} (limit given: {})", args["query"], args.contains_key("limit")))
//! })?;
//! let mut registry = ToolRegistry::new();
//! registry.register(tool)?;
//!
//! // OpenAI strict: every property required, optional ones nullable, no `default`.
//! let tools = registry.schemas_in(Format::OpenAiChat { strict: true }).unwrap();
//! let params = &tools[0]["function"]["parameters"];
//! assert_eq!(params["required"], json!(["query", "limit"]));
//! assert_eq!(params["properties"]["limit"]["type"], json!(["integer", "null"]));
//!
//! // Gemini: OpenAPI subset, Rust integer formats dropped.
//! let gemini = registry.schemas_in(Format::Gemini { recursion: Default::default() }).unwrap();
//! let decl = &gemini[0]["functionDeclarations"][0];
//! assert_eq!(decl["parameters"]["properties"]["limit"], json!({"type": "INTEGER", "minimum": 0, "default": 10}));
//!
//! // A strict model sends `null` for "not given"; it reaches the tool as absent.
//! let answer = json!({"role": "assistant", "tool_calls": [{
//!     "id": "call_1", "type": "function",
//!     "function": {"name": "search_notes", "arguments": "{\"query\":\"rust\",\"limit\":null}"}
//! }]});
//! let calls = ToolCall::parse(Format::OpenAiChat { strict: true }, &answer)?;
//! let result = registry.execute_call(&calls[0], &ToolContext::new()).await;
//! assert_eq!(result.output, "searched \"rust\" (limit given: false)");
//! let messages = render_result(&calls[0], &result, Format::OpenAiChat { strict: true }, Rendering::First);
//! assert_eq!(messages[0], json!({"role": "tool", "tool_call_id": "call_1", "content": result.output}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::ops::Deref;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::registry::history::Rendering;
use crate::result::ToolResult;
use crate::tool::spec::ToolSpec;

mod anthropic;
mod attachments;
mod call;
mod error;
mod gemini;
mod json;
mod lower;
mod mcp;
mod openai;
mod provider;
mod reply;
#[cfg(feature = "tokens")]
pub mod token_count;
mod turn;
mod validate;
mod walk;

pub use crate::args::normalize_arguments;
pub use call::ToolCall;
pub use error::{CallParseError, Fallback, FallbackForm, FormatError, RenderError, Rule};
pub use turn::render_results;

use error::Violation;
use lower::{Ctx, Step};
use provider::{Looser, Provider, Variant};

/// A provider format: how tools, calls and results are written for one API.
///
/// Where a variant has a `strict` flag, `strict: true` renders every tool in
/// strict mode; `strict: false` renders in strict mode only the tools whose
/// `flags.strict` ([`ToolSpec::flags`]) is set. A tool whose schema strict mode cannot
/// express (a map, recursion under Anthropic's rules, …) is then rendered
/// without strict mode and the fallback recorded ([`OnRefusal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// The canonical form: `{"name", "description", "parameters"}`, the
    /// parameters being the JSON Schema 2020-12 the tool was built with.
    Json,
    /// OpenAI Chat Completions: `{"type": "function", "function": {"name",
    /// "description", "parameters", "strict"}}`. Names follow
    /// `^[a-zA-Z0-9_-]{1,64}$` (OpenAI API reference). Strict mode follows the
    /// Structured Outputs guide, "Supported schemas": at every depth
    /// `additionalProperties: false` and every property required (optional
    /// ones nullable, mapped back to "absent" at call time by
    /// [`normalize_arguments`]); no `default`; `oneOf` → `anyOf`; `allOf`
    /// folded or refused; `not`, `if`/`then`/`else`, maps refused; other
    /// unsupported keywords and formats removed; a `$ref` never has siblings;
    /// the documented size limits checked.
    OpenAiChat {
        /// Render every tool in strict mode.
        strict: bool,
    },
    /// OpenAI Responses: flat `{"type": "function", "name", "description",
    /// "parameters", "strict"}`, same schema rules as
    /// [`OpenAiChat`](Self::OpenAiChat). `strict` is always written because
    /// the Responses API enforces strict mode when it is absent.
    OpenAiResponses {
        /// Render every tool in strict mode.
        strict: bool,
    },
    /// Anthropic Messages: `{"name", "description", "input_schema",
    /// "input_examples"?, "strict"?}` ("Define tools"). The root of
    /// `input_schema` is one object, never a root `anyOf`/`oneOf`/`allOf`
    /// (a root union of object shapes is merged into one object). Strict
    /// mode follows "Structured outputs › JSON Schema limitations": closed
    /// objects, no recursion, no numeric/length constraints, listed formats only.
    Anthropic {
        /// Render every tool with `strict: true`.
        strict: bool,
    },
    /// Gemini `functionDeclarations` with the OpenAPI-subset `parameters`
    /// (Gemini API reference, `Schema`): every `$ref` inlined (recursion
    /// refused, or unrolled on request), `[T, "null"]` → `type: T,
    /// nullable: true`, `const` → one-value enum, enums of strings only,
    /// keywords outside the `Schema` fields removed (`additionalProperties`,
    /// `exclusiveMinimum`, `$schema`, …), formats limited to `float`/`double`,
    /// `int32`/`int64`, `enum`/`date-time`, types upper-case. Rendered as
    /// `[{"functionDeclarations": [...]}]`, the request's `tools` value. A tool
    /// this subset cannot express (a map, recursion not unrolled) gets a
    /// `parametersJsonSchema` declaration in a registry rendering ([`OnRefusal`]).
    Gemini {
        /// What to do with recursive types.
        recursion: Recursion,
    },
    /// Gemini `functionDeclarations` with `parametersJsonSchema`: the
    /// canonical JSON Schema (with `$defs`), root `$schema` removed.
    GeminiJsonSchema,
    /// MCP `tools/list` entries (specification 2025-11-25, "Tools"):
    /// `{"name", "title"?, "description", "inputSchema", "annotations"}`;
    /// `$defs` kept only for recursive types, every `$ref` local and
    /// resolvable, no `$schema`. Names: 1–128 of `[A-Za-z0-9_.-]`.
    Mcp,
    /// Anthropic Messages with Anthropic's own server-side tool search
    /// (Anthropic docs, "Tool search tool"; beta header
    /// `advanced-tool-use-2025-11-20`) in place of the view's `tool_search`:
    /// each tool rendered as [`Anthropic`](Self::Anthropic) renders it, and
    /// the list ends with `search`'s server tool definition
    /// ([`ServerSearch::definition`]). A
    /// [`RegistryView`](crate::RegistryView) with deferred tools sends every
    /// tool of the view, each deferred one with `"defer_loading": true`,
    /// leaves its own `tool_search` out and ignores the session's loaded
    /// tools (Anthropic's server loads them); the list is the same on every
    /// turn. Tool calls and results are read and written as for
    /// [`Anthropic`](Self::Anthropic). Not in [`Format::ALL`] (its tools are
    /// Anthropic's); see [`Format::ANTHROPIC_TOOL_SEARCH`].
    AnthropicToolSearch {
        /// Render every tool with `strict: true`.
        strict: bool,
        /// Which of Anthropic's search tools goes with the list.
        search: ServerSearch,
    },
}

/// Anthropic's server-side tool search, for [`Format::AnthropicToolSearch`]
/// (Anthropic docs, "Tool search tool": the definitions below, and at least
/// one tool of a request must not be deferred, which the search tool is not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerSearch {
    /// `{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}`:
    /// the model searches with natural-language queries. Slug suffix `-tool-search-bm25`.
    Bm25,
    /// `{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}`:
    /// the model searches with regular expressions. Slug suffix `-tool-search-regex`.
    Regex,
}

impl ServerSearch {
    /// The tool definition that goes in the request's `tools`.
    pub fn definition(self) -> Value {
        let (kind, name) = self.type_and_name();
        serde_json::json!({"type": kind, "name": name})
    }

    /// The definition's `type` and `name`.
    fn type_and_name(self) -> (&'static str, &'static str) {
        match self {
            Self::Bm25 => ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"),
            Self::Regex => ("tool_search_tool_regex_20251119", "tool_search_tool_regex"),
        }
    }

    /// `bm25` or `regex`, as in the format's slug.
    fn slug(self) -> &'static str {
        match self {
            Self::Bm25 => "bm25",
            Self::Regex => "regex",
        }
    }
}

/// How [`Format::Gemini`] treats a recursive type (a tree), which its
/// reference-free schema cannot express.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Recursion {
    /// Refuse the tool's `parameters` with a [`FormatError`] (rule
    /// `gemini.recursion`); a registry rendering then falls back to
    /// `parametersJsonSchema` for that tool (unless [`OnRefusal::Refuse`]). The default.
    #[default]
    Refuse,
    /// Write the type out this many levels inside itself; at the deepest
    /// level the fields that would recurse further are left out (give them
    /// `#[serde(default)]` so such values still deserialise). `Unroll(0)` refuses.
    Unroll(u8),
}

/// What a registry rendering ([`ToolRegistry::schemas_with`](crate::ToolRegistry::schemas_with)) does with a
/// tool that cannot take the strictest form of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OnRefusal {
    /// Render that tool in the format's looser form (OpenAI and Anthropic:
    /// without strict mode; Gemini: `parametersJsonSchema`) and record a
    /// [`Fallback`] in [`ToolSchemas::fallbacks`]; a tool that the looser form
    /// cannot take either is left out and reported in the [`RenderError`]. The default.
    #[default]
    Fallback,
    /// Leave out every tool that cannot take the strictest form and report
    /// each in the [`RenderError`] (the behaviour before fallbacks existed),
    /// for callers that would rather fix the tool than send it loosely.
    Refuse,
}

impl Format {
    /// One of each format, strict variants included, for listings and tests.
    pub const ALL: &'static [Format] = &[
        Format::Json,
        Format::OpenAiChat { strict: false },
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: false },
        Format::OpenAiResponses { strict: true },
        Format::Anthropic { strict: false },
        Format::Anthropic { strict: true },
        Format::Gemini {
            recursion: Recursion::Refuse,
        },
        Format::GeminiJsonSchema,
        Format::Mcp,
    ];

    /// The four [`Format::AnthropicToolSearch`] variants (plain and strict,
    /// BM25 and regex): slugs `anthropic-tool-search-bm25`,
    /// `anthropic-strict-tool-search-bm25`, `anthropic-tool-search-regex`,
    /// `anthropic-strict-tool-search-regex`.
    pub const ANTHROPIC_TOOL_SEARCH: &'static [Format] = &[
        Format::AnthropicToolSearch {
            strict: false,
            search: ServerSearch::Bm25,
        },
        Format::AnthropicToolSearch {
            strict: true,
            search: ServerSearch::Bm25,
        },
        Format::AnthropicToolSearch {
            strict: false,
            search: ServerSearch::Regex,
        },
        Format::AnthropicToolSearch {
            strict: true,
            search: ServerSearch::Regex,
        },
    ];

    /// Every format with a slug of its own: [`ALL`](Self::ALL), then
    /// [`ANTHROPIC_TOOL_SEARCH`](Self::ANTHROPIC_TOOL_SEARCH).
    fn named() -> impl Iterator<Item = Format> {
        Self::ALL.iter().chain(Self::ANTHROPIC_TOOL_SEARCH).copied()
    }

    /// The server-side search that ends this format's tool list
    /// ([`Format::AnthropicToolSearch`]), `None` for the other formats.
    pub fn server_search(self) -> Option<ServerSearch> {
        self.provider().1.server_search
    }

    /// The provider table entry and this variant's parameters: the one
    /// `match` over providers (adding a provider adds one line here).
    pub(crate) fn provider(self) -> (&'static Provider, Variant) {
        match self {
            Self::Json => (&json::JSON, Variant::PLAIN),
            Self::OpenAiChat { strict } => (&openai::CHAT, Variant::strict(strict)),
            Self::OpenAiResponses { strict } => (&openai::RESPONSES, Variant::strict(strict)),
            Self::Anthropic { strict } => (&anthropic::ANTHROPIC, Variant::strict(strict)),
            Self::Gemini { recursion } => (
                &gemini::GEMINI,
                Variant {
                    recursion: Some(recursion),
                    ..Variant::PLAIN
                },
            ),
            Self::GeminiJsonSchema => (&gemini::GEMINI_JSON_SCHEMA, Variant::PLAIN),
            Self::Mcp => (&mcp::MCP, Variant::PLAIN),
            Self::AnthropicToolSearch { strict, search } => (
                &anthropic::ANTHROPIC,
                Variant {
                    server_search: Some(search),
                    ..Variant::strict(strict)
                },
            ),
        }
    }

    /// The short name used on command lines and in file names
    /// (`openai-chat-strict`, `gemini-unroll-3`,
    /// `anthropic-tool-search-bm25`); [`FromStr`] reads it back.
    pub fn slug(self) -> String {
        let (provider, variant) = self.provider();
        let mut slug = provider.slug.to_owned();
        if variant.strict == Some(true) {
            slug.push_str("-strict");
        }
        if let Some(Recursion::Unroll(n @ 1..)) = variant.recursion {
            slug.push_str(&format!("-unroll-{n}"));
        }
        if let Some(search) = variant.server_search {
            slug.push_str("-tool-search-");
            slug.push_str(search.slug());
        }
        slug
    }

    /// JSON Pointer to the parameters schema inside one rendered tool
    /// (`/function/parameters` for OpenAI chat, `/input_schema` for Anthropic, …).
    pub fn parameters_pointer(self) -> &'static str {
        self.provider().0.parameters_pointer
    }

    /// Whether `spec` is rendered in strict mode for this format.
    pub fn is_strict_for(self, spec: &ToolSpec) -> bool {
        self.provider()
            .1
            .strict
            .is_some_and(|strict| strict || spec.flags.strict)
    }

    /// The pipeline for `spec`, or `None` for [`Format::Json`].
    fn pipeline(self, strict: bool) -> Option<&'static Pipeline> {
        let provider = self.provider().0;
        if strict {
            provider.strict.or(provider.plain)
        } else {
            provider.plain
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (provider, variant) = self.provider();
        f.write_str(provider.title)?;
        if variant.strict == Some(true) {
            f.write_str(" (strict)")?;
        }
        if let Some(Recursion::Unroll(n @ 1..)) = variant.recursion {
            write!(f, " (recursion unrolled {n} levels)")?;
        }
        if let Some(search) = variant.server_search {
            write!(
                f,
                " with server-side tool search ({})",
                search.type_and_name().0
            )?;
        }
        Ok(())
    }
}

/// A string that names no [`Format`]. Its message lists every slug of
/// [`Format::ALL`] (and `<slug>-unroll-<levels>` where a format takes a
/// [`Recursion`]) and of [`Format::ANTHROPIC_TOOL_SEARCH`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names = Vec::new();
        for format in Format::named() {
            names.push(format.slug());
            if format.provider().0.unrolled.is_some() {
                names.push(format!("{}-unroll-<levels>", format.slug()));
            }
        }
        write!(
            f,
            "unknown format `{}`; expected one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownFormat(s.to_owned());
        for format in Self::ALL {
            let (provider, _) = format.provider();
            if let Some(unrolled) = provider.unrolled
                && let Some(n) = s
                    .strip_prefix(provider.slug)
                    .and_then(|rest| rest.strip_prefix("-unroll-"))
            {
                return n.parse::<u8>().map(unrolled).map_err(|_| unknown());
            }
        }
        Self::named().find(|f| f.slug() == s).ok_or_else(unknown)
    }
}

/// A target's lowering: name check, steps, validator.
pub(crate) struct Pipeline {
    pub(crate) check_name: fn(&str) -> Result<(), Violation>,
    pub(crate) steps: &'static [Step],
    pub(crate) validate: fn(&Value) -> Result<(), Violation>,
}

impl Pipeline {
    fn lower(&self, spec: &ToolSpec, format: Format) -> Result<Value, FormatError> {
        let fail = |step, v| FormatError::from_violation(&spec.name, format, step, v);
        (self.check_name)(&spec.name).map_err(|v| fail("check_name", v))?;
        let mut schema = spec.parameters.clone();
        lower::run(self.steps, &mut schema, &Ctx { format }).map_err(|(step, v)| fail(step, v))?;
        (self.validate)(&schema).map_err(|v| fail("validate", v))?;
        Ok(schema)
    }
}

/// Renders one tool for `format`: the object that goes in the request's
/// tool list (for Gemini, one `FunctionDeclaration`).
///
/// # Errors
/// [`FormatError`] when the tool's name or schema breaks a rule of the
/// target that lowering cannot repair.
pub fn render_tool(spec: &ToolSpec, format: Format) -> Result<Value, FormatError> {
    let strict = format.is_strict_for(spec);
    let provider = format.provider().0;
    let parameters = match format.pipeline(strict) {
        Some(pipeline) => pipeline.lower(spec, format)?,
        None => spec.parameters.clone(),
    };
    Ok((provider.render_tool)(spec, parameters, strict))
}

/// Renders one tool for `format` in the strictest form it can take: as
/// [`render_tool`] when that succeeds (`None` fallback), else in the format's
/// looser form with the [`Fallback`] that says so:
///
/// - [`Format::OpenAiChat`] / [`Format::OpenAiResponses`] in strict mode: the
///   plain function, `"strict": false` (strict is per function, OpenAI
///   Structured Outputs guide);
/// - [`Format::Anthropic`] in strict mode: the plain tool, no `strict` (a
///   field of each tool definition, Anthropic docs "Define tools");
/// - [`Format::Gemini`] (after its [`Recursion`] option was applied): a
///   declaration with `parametersJsonSchema` instead of `parameters` (either
///   field per `FunctionDeclaration`, Gemini API reference).
///
/// Other formats have no looser form.
///
/// # Errors
/// The [`FormatError`] of the strictest form when there is no looser form
/// or the looser form fails too (e.g. an invalid tool name).
pub fn render_tool_with_fallback(
    spec: &ToolSpec,
    format: Format,
) -> Result<(Value, Option<Fallback>), FormatError> {
    let error = match render_tool(spec, format) {
        Ok(tool) => return Ok((tool, None)),
        Err(e) => e,
    };
    let provider = format.provider().0;
    let (looser, form) = match provider.looser {
        Looser::NonStrict if format.is_strict_for(spec) => {
            let plain = provider.plain.ok_or_else(|| error.clone())?;
            let parameters = plain.lower(spec, format).map_err(|_| error.clone())?;
            (
                (provider.render_tool)(spec, parameters, false),
                FallbackForm::NonStrict,
            )
        }
        Looser::Format(other, form) => {
            let (other_provider, _) = other.provider();
            let pipeline = other_provider.plain.ok_or_else(|| error.clone())?;
            let parameters = pipeline.lower(spec, other).map_err(|_| error.clone())?;
            ((other_provider.render_tool)(spec, parameters, false), form)
        }
        Looser::NonStrict | Looser::None => return Err(error),
    };
    Ok((
        looser,
        Some(Fallback {
            tool: spec.name.clone(),
            format,
            form,
            reason: error,
        }),
    ))
}

/// Checks an already-rendered parameters schema (e.g. taken from
/// [`render_tool`]'s output at [`Format::parameters_pointer`], or written by
/// hand) and the tool name against `format`'s validator, without lowering.
///
/// # Errors
/// The first broken rule, as a [`FormatError`] with step `validate`.
pub fn validate_parameters(
    format: Format,
    name: &str,
    parameters: &Value,
    strict: bool,
) -> Result<(), FormatError> {
    let Some(pipeline) = format.pipeline(strict) else {
        return Ok(());
    };
    let fail = |step, v| FormatError::from_violation(name, format, step, v);
    (pipeline.check_name)(name).map_err(|v| fail("check_name", v))?;
    (pipeline.validate)(parameters).map_err(|v| fail("validate", v))
}

/// The request's tool-list value for `format` made of rendered tools: the
/// array itself, or for Gemini `[{"functionDeclarations": [...]}]`; for
/// [`Format::AnthropicToolSearch`] the server search tool comes last.
pub(crate) fn tool_list(format: Format, mut tools: Vec<Value>) -> Value {
    let (provider, variant) = format.provider();
    if let Some(search) = variant.server_search {
        tools.push(search.definition());
    }
    (provider.tool_list)(tools)
}

/// The rendered tool list of a registry for one format, ready to be the
/// `tools` value of a request (for MCP: the `tools` of a `tools/list` result),
/// with the report of the tools rendered in a looser form ([`fallbacks`](Self::fallbacks)).
///
/// Cheap to clone (shared); dereferences to the JSON [`Value`] and
/// serialises as it (the report is not serialised).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchemas {
    value: Arc<Value>,
    fallbacks: Arc<[Fallback]>,
}

impl ToolSchemas {
    /// A rendering made elsewhere (a [`RegistryView`](crate::RegistryView)'s ordering).
    pub(crate) fn from_parts(value: Value, fallbacks: Vec<Fallback>) -> Self {
        Self {
            value: Arc::new(value),
            fallbacks: fallbacks.into(),
        }
    }

    /// The JSON value.
    pub fn as_value(&self) -> &Value {
        &self.value
    }

    /// The JSON value, owned (copied when shared).
    pub fn into_value(self) -> Value {
        Arc::try_unwrap(self.value).unwrap_or_else(|shared| (*shared).clone())
    }

    /// The rendering report: one [`Fallback`] per tool rendered in a looser
    /// form than the format's strictest, in name order; empty when every tool
    /// took the strictest form (and always with [`OnRefusal::Refuse`]).
    pub fn fallbacks(&self) -> &[Fallback] {
        &self.fallbacks
    }
}

impl Deref for ToolSchemas {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.value
    }
}

impl Serialize for ToolSchemas {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl From<ToolSchemas> for Value {
    fn from(t: ToolSchemas) -> Self {
        t.into_value()
    }
}

/// A registry's rendering for one format: the tool list, or the error listing the tools left out.
pub(crate) type Rendered = Result<ToolSchemas, RenderError>;

/// Renders `specs` (a registry's tools, in name order) for `format` as the
/// request's tool list, each tool in the strictest form it can take unless
/// `on_refusal` refuses fallbacks (see [`ToolRegistry::schemas_with`](crate::ToolRegistry::schemas_with)).
pub(crate) fn render_all<'a>(
    specs: impl Iterator<Item = &'a ToolSpec>,
    format: Format,
    on_refusal: OnRefusal,
) -> Rendered {
    let mut tools = Vec::new();
    let mut errors = Vec::new();
    let mut fallbacks = Vec::new();
    for spec in specs {
        let rendered = match on_refusal {
            OnRefusal::Refuse => render_tool(spec, format).map(|t| (t, None)),
            OnRefusal::Fallback => render_tool_with_fallback(spec, format),
        };
        match rendered {
            Ok((t, fallback)) => {
                tools.push(t);
                fallbacks.extend(fallback);
            }
            Err(e) => errors.push(e),
        }
    }
    let schemas = ToolSchemas {
        value: Arc::new(tool_list(format, tools)),
        fallbacks: fallbacks.into(),
    };
    if errors.is_empty() {
        Ok(schemas)
    } else {
        Err(RenderError {
            errors: errors.into(),
            partial: schemas,
        })
    }
}

/// Renders `result` (the answer to `call`) as `format`'s result message,
/// applying the two-layer memory rule for `rendering` ([`Rendering::First`]
/// on the turn the result was produced, [`Rendering::Later`] when replaying
/// history: then an output-once result shows its long-term memory and no
/// images; see [`ToolResult::render`]). Returns what to append:
///
/// - [`Format::OpenAiChat`]: messages: `{"role": "tool", "tool_call_id",
///   "content"}`, then, if there are images or files, a `user` message with
///   `image_url` / `file` parts (tool messages carry text only). Several
///   results of one turn: [`render_results`], which puts the media of all of
///   them in one `user` message after the last tool message.
/// - [`Format::OpenAiResponses`]: one `function_call_output` input item;
///   with media its `output` is a list of `input_text`/`input_image`/`input_file` parts.
/// - [`Format::Anthropic`]: one `tool_result` content block (text, base64
///   `image` blocks and base64 `document` blocks for PDFs, `is_error` on
///   failure) for the next `user` message.
/// - [`Format::Gemini`] / [`Format::GeminiJsonSchema`]: one
///   `functionResponse` part (`response.output` / `response.error`, images
///   and PDFs as `inlineData` parts with their MIME type).
/// - [`Format::Mcp`]: one `CallToolResult` (`content`: text, `image` items,
///   inline attachments as embedded `resource` items with a `blob`, or
///   `audio` items for `audio/*`; `isError`; `structuredContent` for JSON
///   object results).
/// - [`Format::Json`]: `{"id", "name", "content", "is_error"}`, plus
///   `"media"` listing every image (`{"type": "image", "mime_type",
///   "data"}`) and file (`{"type": "file", "name", "mime_type", "data" or
///   "path"}`) when there are any.
///
/// Inline attachments ([`Attachment::data`](crate::Attachment::data)) and
/// images go to the model where the provider takes their media type
/// (compared without regard to case, sent in the provider's spelling) and
/// size (each provider's documented limits) and their data is valid
/// standard base64; one it cannot take is replaced by a text note after the
/// output saying what it was, why (and so what to do: convert it, fix the
/// tool, or ask for a smaller one), and where the file is, never dropped
/// silently. MCP and JSON take every media type and size. An empty text
/// becomes `(no output)` where providers need text. Title, metadata and
/// on-disk-only attachments stay with the host (JSON lists the latter by path).
pub fn render_result(
    call: &ToolCall,
    result: &ToolResult,
    format: Format,
    rendering: Rendering,
) -> Vec<Value> {
    let reply = reply::reply(result, rendering);
    (format.provider().0.render_result)(call, &reply, &mut 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_round_trip() {
        for f in Format::named() {
            assert_eq!(f.slug().parse::<Format>(), Ok(f));
        }
        assert_eq!(
            "anthropic-strict-tool-search-regex".parse::<Format>(),
            Ok(Format::AnthropicToolSearch {
                strict: true,
                search: ServerSearch::Regex
            })
        );
        assert_eq!(
            "gemini-unroll-3".parse::<Format>(),
            Ok(Format::Gemini {
                recursion: Recursion::Unroll(3)
            })
        );
        assert!("openai".parse::<Format>().is_err());
    }

    #[test]
    fn unknown_format_lists_every_slug() {
        let e = "openai".parse::<Format>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown format `openai`; expected one of: json, openai-chat, openai-chat-strict, openai-responses, openai-responses-strict, anthropic, anthropic-strict, gemini, gemini-unroll-<levels>, gemini-json-schema, mcp, anthropic-tool-search-bm25, anthropic-strict-tool-search-bm25, anthropic-tool-search-regex, anthropic-strict-tool-search-regex"
        );
        assert!("gemini-unroll-x".parse::<Format>().is_err());
    }
}
