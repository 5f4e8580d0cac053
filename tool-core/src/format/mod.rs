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
//! and format ([`ToolRegistry::schemas_in`]).
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
use std::sync::{Arc, PoisonError, RwLock};

use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::execute::ToolArgs;
use crate::memory::Rendering;
use crate::registry::ToolRegistry;
use crate::result::ToolResult;
use crate::spec::ToolSpec;

mod anthropic;
mod call;
mod error;
mod gemini;
mod lower;
mod mcp;
mod openai;
mod reply;
mod validate;
mod walk;

pub use call::{ToolCall, normalize_arguments};
pub use error::{CallParseError, Fallback, FallbackForm, FormatError, RenderError, Rule};

use error::Violation;
use lower::{Ctx, Step};

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

/// What a registry rendering ([`ToolRegistry::schemas_with`]) does with a
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

    /// The short name used on command lines and in file names
    /// (`openai-chat-strict`, `gemini-unroll-3`); [`FromStr`] reads it back.
    pub fn slug(self) -> String {
        match self {
            Self::Json => "json".to_owned(),
            Self::OpenAiChat { strict: false } => "openai-chat".to_owned(),
            Self::OpenAiChat { strict: true } => "openai-chat-strict".to_owned(),
            Self::OpenAiResponses { strict: false } => "openai-responses".to_owned(),
            Self::OpenAiResponses { strict: true } => "openai-responses-strict".to_owned(),
            Self::Anthropic { strict: false } => "anthropic".to_owned(),
            Self::Anthropic { strict: true } => "anthropic-strict".to_owned(),
            Self::Gemini {
                recursion: Recursion::Refuse | Recursion::Unroll(0),
            } => "gemini".to_owned(),
            Self::Gemini {
                recursion: Recursion::Unroll(n),
            } => format!("gemini-unroll-{n}"),
            Self::GeminiJsonSchema => "gemini-json-schema".to_owned(),
            Self::Mcp => "mcp".to_owned(),
        }
    }

    /// JSON Pointer to the parameters schema inside one rendered tool
    /// (`/function/parameters` for OpenAI chat, `/input_schema` for Anthropic, …).
    pub fn parameters_pointer(self) -> &'static str {
        match self {
            Self::Json | Self::OpenAiResponses { .. } | Self::Gemini { .. } => "/parameters",
            Self::OpenAiChat { .. } => "/function/parameters",
            Self::Anthropic { .. } => "/input_schema",
            Self::GeminiJsonSchema => "/parametersJsonSchema",
            Self::Mcp => "/inputSchema",
        }
    }

    /// Whether `spec` is rendered in strict mode for this format.
    pub fn is_strict_for(self, spec: &ToolSpec) -> bool {
        match self {
            Self::OpenAiChat { strict }
            | Self::OpenAiResponses { strict }
            | Self::Anthropic { strict } => strict || spec.flags.strict,
            _ => false,
        }
    }

    /// The pipeline for `spec`, or `None` for [`Format::Json`].
    fn pipeline(self, strict: bool) -> Option<&'static Pipeline> {
        Some(match self {
            Self::Json => return None,
            Self::OpenAiChat { .. } | Self::OpenAiResponses { .. } if strict => &openai::STRICT,
            Self::OpenAiChat { .. } | Self::OpenAiResponses { .. } => &openai::PLAIN,
            Self::Anthropic { .. } if strict => &anthropic::STRICT,
            Self::Anthropic { .. } => &anthropic::PLAIN,
            Self::Gemini { .. } => &gemini::OPENAPI,
            Self::GeminiJsonSchema => &gemini::JSON_SCHEMA,
            Self::Mcp => &mcp::PIPELINE,
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let strict = |s: bool| if s { " (strict)" } else { "" };
        match *self {
            Self::Json => f.write_str("canonical JSON Schema"),
            Self::OpenAiChat { strict: s } => write!(f, "OpenAI Chat Completions{}", strict(s)),
            Self::OpenAiResponses { strict: s } => write!(f, "OpenAI Responses{}", strict(s)),
            Self::Anthropic { strict: s } => write!(f, "Anthropic{}", strict(s)),
            Self::Gemini {
                recursion: Recursion::Unroll(n),
            } if n > 0 => write!(f, "Gemini (recursion unrolled {n} levels)"),
            Self::Gemini { .. } => f.write_str("Gemini"),
            Self::GeminiJsonSchema => f.write_str("Gemini (parametersJsonSchema)"),
            Self::Mcp => f.write_str("MCP"),
        }
    }
}

/// A string that names no [`Format`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown format `{0}`; expected one of: json, openai-chat, openai-chat-strict, openai-responses, openai-responses-strict, anthropic, anthropic-strict, gemini, gemini-unroll-<levels>, gemini-json-schema, mcp"
)]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(n) = s.strip_prefix("gemini-unroll-") {
            return n
                .parse::<u8>()
                .map(|n| Self::Gemini {
                    recursion: Recursion::Unroll(n),
                })
                .map_err(|_| UnknownFormat(s.to_owned()));
        }
        Self::ALL
            .iter()
            .copied()
            .find(|f| f.slug() == s)
            .ok_or_else(|| UnknownFormat(s.to_owned()))
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
    let Some(pipeline) = format.pipeline(strict) else {
        return Ok(spec.canonical_schema());
    };
    let parameters = pipeline.lower(spec, format)?;
    Ok(match format {
        Format::Json => spec.canonical_schema(),
        Format::OpenAiChat { .. } => openai::chat_tool(spec, &parameters, strict),
        Format::OpenAiResponses { .. } => openai::responses_tool(spec, &parameters, strict),
        Format::Anthropic { .. } => anthropic::tool(spec, &parameters, strict),
        Format::Gemini { .. } => gemini::declaration(spec, parameters),
        Format::GeminiJsonSchema => gemini::json_schema_declaration(spec, &parameters),
        Format::Mcp => {
            let mut tool = mcp::tool(spec, &parameters);
            // The output schema goes through the same lowering; one that cannot
            // be lowered is left out rather than failing the tool.
            if let Some(output) = &spec.output_schema {
                let mut schema = output.clone();
                if lower::run(pipeline.steps, &mut schema, &Ctx { format }).is_ok()
                    && (pipeline.validate)(&schema).is_ok()
                {
                    tool["outputSchema"] = schema;
                }
            }
            tool
        }
    })
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
    let strict = format.is_strict_for(spec);
    let (looser, form) = match format {
        Format::OpenAiChat { .. } | Format::OpenAiResponses { .. } | Format::Anthropic { .. }
            if strict =>
        {
            let parameters = match format.pipeline(false) {
                Some(plain) => plain.lower(spec, format).map_err(|_| error.clone())?,
                None => return Err(error),
            };
            let tool = match format {
                Format::OpenAiChat { .. } => openai::chat_tool(spec, &parameters, false),
                Format::OpenAiResponses { .. } => openai::responses_tool(spec, &parameters, false),
                _ => anthropic::tool(spec, &parameters, false),
            };
            (tool, FallbackForm::NonStrict)
        }
        Format::Gemini { .. } => {
            let parameters = gemini::JSON_SCHEMA
                .lower(spec, Format::GeminiJsonSchema)
                .map_err(|_| error.clone())?;
            (
                gemini::json_schema_declaration(spec, &parameters),
                FallbackForm::ParametersJsonSchema,
            )
        }
        _ => return Err(error),
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
/// array itself, or for Gemini `[{"functionDeclarations": [...]}]`.
pub(crate) fn tool_list(format: Format, tools: Vec<Value>) -> Value {
    match format {
        Format::Gemini { .. } | Format::GeminiJsonSchema => {
            json!([{ "functionDeclarations": tools }])
        }
        _ => Value::Array(tools),
    }
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

type Rendered = Result<ToolSchemas, RenderError>;

/// Per-registry cache of renderings, one entry per format and refusal mode;
/// the registry clears it whenever its set of tools changes.
#[derive(Default)]
pub(crate) struct RenderCache {
    slots: RwLock<Vec<(CacheKey, Rendered)>>,
}

type CacheKey = (Format, OnRefusal);

impl RenderCache {
    /// Forgets every rendering (the tools changed).
    pub(crate) fn clear(&mut self) {
        self.slots
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn get(&self, format: CacheKey) -> Option<Rendered> {
        let slots = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        slots
            .iter()
            .find(|(f, _)| *f == format)
            .map(|(_, r)| r.clone())
    }

    fn put(&self, format: CacheKey, rendered: Rendered) {
        let mut slots = self.slots.write().unwrap_or_else(PoisonError::into_inner);
        if !slots.iter().any(|(f, _)| *f == format) {
            slots.push((format, rendered));
        }
    }
}

impl Clone for RenderCache {
    fn clone(&self) -> Self {
        let slots = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        Self {
            slots: RwLock::new(slots.clone()),
        }
    }
}

impl fmt::Debug for RenderCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slots = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("RenderCache")
            .field(
                "formats",
                &slots.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ToolRegistry {
    /// Every tool rendered for `format`, in name order, as the request's tool
    /// list (see [`ToolSchemas`]), each in the strictest form it can take
    /// ([`OnRefusal::Fallback`]: a tool strict mode cannot express is sent
    /// without it, recorded in [`ToolSchemas::fallbacks`]). Rendered once per
    /// format and cached until the registry's tools change; later calls are a
    /// lookup and a reference-count bump.
    ///
    /// [`schemas`](Self::schemas) (no argument) stays the canonical list;
    /// `schemas_in(Format::Json)` wraps the same objects.
    ///
    /// ```
    /// use serde_json::{json, Map, Value};
    /// use tool_core::format::{Format, OnRefusal};
    /// use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};
    ///
    /// let tool = |name: &str, param: Value| {
    ///     let spec = ToolSpec::new(name, "A tool.", json!({
    ///         "type": "object", "properties": {"p": param}, "required": ["p"]
    ///     }));
    ///     Tool::new(spec, |_: Map<String, Value>, _| async { ToolResult::ok("") }).unwrap()
    /// };
    /// let mut registry = ToolRegistry::new();
    /// registry.register(tool("counts", json!({"type": "object", "additionalProperties": {"type": "integer"}})))?;
    /// registry.register(tool("plain", json!({"type": "string"})))?;
    ///
    /// let strict = registry.schemas_in(Format::OpenAiChat { strict: true })?;
    /// assert_eq!(strict[0]["function"]["strict"], false, "the map tool falls back");
    /// assert_eq!(strict[1]["function"]["strict"], true);
    /// assert_eq!(strict.fallbacks()[0].tool, "counts");
    ///
    /// let refused = registry.schemas_with(Format::OpenAiChat { strict: true }, OnRefusal::Refuse);
    /// assert_eq!(refused.unwrap_err().errors()[0].tool, "counts");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RenderError`] listing the tools that cannot be rendered for this
    /// format even in its looser form (each a [`FormatError`] with path, rule
    /// and source); its [`partial`](RenderError::partial) holds the other tools.
    pub fn schemas_in(&self, format: Format) -> Result<ToolSchemas, RenderError> {
        self.schemas_with(format, OnRefusal::Fallback)
    }

    /// [`schemas_in`](Self::schemas_in) with the choice of what to do with a
    /// tool that cannot take the format's strictest form ([`OnRefusal`]).
    /// Cached per format and mode.
    ///
    /// # Errors
    /// [`RenderError`] listing the tools left out; with [`OnRefusal::Refuse`]
    /// that includes every tool that would have fallen back.
    pub fn schemas_with(
        &self,
        format: Format,
        on_refusal: OnRefusal,
    ) -> Result<ToolSchemas, RenderError> {
        let key = (format, on_refusal);
        if let Some(hit) = self.rendered.get(key) {
            return hit;
        }
        let mut tools = Vec::with_capacity(self.len());
        let mut errors = Vec::new();
        let mut fallbacks = Vec::new();
        for spec in self.specs() {
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
        let rendered = if errors.is_empty() {
            Ok(schemas)
        } else {
            Err(RenderError {
                errors: errors.into(),
                partial: schemas,
            })
        };
        self.rendered.put(key, rendered.clone());
        rendered
    }

    /// Every tool that cannot be rendered for one of `formats`, even in the
    /// format's looser form, with the reason; empty when all render. Run it at
    /// start-up to fail early. (Tools that fall back are not errors: see
    /// [`ToolSchemas::fallbacks`], or refuse them with [`OnRefusal::Refuse`].)
    pub fn check_formats(&self, formats: &[Format]) -> Vec<FormatError> {
        formats
            .iter()
            .filter_map(|f| self.schemas_in(*f).err())
            .flat_map(|e| e.errors.iter().cloned().collect::<Vec<_>>())
            .collect()
    }

    /// Executes a call read from a provider ([`ToolCall::parse`]): applies
    /// [`normalize_arguments`] with the tool's canonical schema (an explicit
    /// `null` for an optional field means absent), then
    /// [`execute`](Self::execute). Never panics, never fails: problems are
    /// error results, as with `execute`.
    pub async fn execute_call(&self, call: &ToolCall, ctx: &ToolContext) -> ToolResult {
        let mut repairs = Vec::new();
        let args = match (self.get(&call.name), &call.arguments) {
            (Some(tool), ToolArgs::Text(text)) => match crate::governance::repair::parse_text(text)
            {
                Ok((Value::Object(mut map), repair)) => {
                    repairs.extend(repair);
                    normalize_arguments(&tool.spec().parameters, &mut map);
                    ToolArgs::Value(Value::Object(map))
                }
                _ => call.arguments.clone(),
            },
            (Some(tool), ToolArgs::Value(Value::Object(map))) => {
                let mut map = map.clone();
                normalize_arguments(&tool.spec().parameters, &mut map);
                ToolArgs::Value(Value::Object(map))
            }
            _ => call.arguments.clone(),
        };
        self.execute_repaired(&call.name, args, ctx, repairs).await
    }
}

/// Renders `result` (the answer to `call`) as `format`'s result message,
/// applying the two-layer memory rule for `rendering` ([`Rendering::First`]
/// on the turn the result was produced, [`Rendering::Later`] when replaying
/// history: then an output-once result shows its long-term memory and no
/// images; see [`ToolResult::render`]). Returns what to append:
///
/// - [`Format::OpenAiChat`]: messages: `{"role": "tool", "tool_call_id",
///   "content"}`, then, if there are images, a `user` message with
///   `image_url` parts (tool messages carry text only).
/// - [`Format::OpenAiResponses`]: one `function_call_output` input item;
///   with images its `output` is a list of `input_text`/`input_image` parts.
/// - [`Format::Anthropic`]: one `tool_result` content block (text and
///   base64 `image` blocks, `is_error` on failure) for the next `user` message.
/// - [`Format::Gemini`] / [`Format::GeminiJsonSchema`]: one
///   `functionResponse` part (`response.output` / `response.error`, images
///   as `inlineData` parts).
/// - [`Format::Mcp`]: one `CallToolResult` (`content`, `isError`,
///   `structuredContent` for JSON object results).
/// - [`Format::Json`]: `{"id", "name", "content", "is_error"}`.
///
/// An empty text becomes `(no output)` where providers need text. Title,
/// attachments and metadata stay with the host.
pub fn render_result(
    call: &ToolCall,
    result: &ToolResult,
    format: Format,
    rendering: Rendering,
) -> Vec<Value> {
    let reply = reply::reply(result, rendering);
    match format {
        Format::Json => vec![json!({
            "id": call.id,
            "name": call.name,
            "content": reply.text,
            "is_error": reply.is_error,
        })],
        Format::OpenAiChat { .. } => openai::chat_result(call, &reply),
        Format::OpenAiResponses { .. } => vec![openai::responses_result(call, &reply)],
        Format::Anthropic { .. } => vec![anthropic::result_block(call, &reply)],
        Format::Gemini { .. } | Format::GeminiJsonSchema => {
            vec![gemini::response_part(call, &reply)]
        }
        Format::Mcp => vec![mcp::call_tool_result(&reply)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.slug().parse::<Format>(), Ok(*f));
        }
        assert_eq!(
            "gemini-unroll-3".parse::<Format>(),
            Ok(Format::Gemini {
                recursion: Recursion::Unroll(3)
            })
        );
        assert!("openai".parse::<Format>().is_err());
    }
}
