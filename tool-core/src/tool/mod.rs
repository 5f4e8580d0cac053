//! [`Tool`]: a spec plus a handler. The runtime API for tools defined without
//! the macro; `#[tool]` is sugar over it ([`Tool::from_static`]).

pub(crate) mod context;
pub(crate) mod doc_comment;
pub mod extract;
pub(crate) mod future;
pub(crate) mod schema;
pub(crate) mod spec;
pub(crate) mod statics;
pub(crate) mod toolset;

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::args::schema::{ArgLayout, ParamTypes};
use crate::governance::url_pattern::UrlPattern;
use crate::registry::error::RegistryError;
use crate::result::ToolResult;
use crate::tool::context::ToolContext;
use crate::tool::future::BoxFuture;
use crate::tool::spec::{DisplayName, SourceLocation, ToolSpec, is_valid_tool_name};
use crate::tool::statics::Invocation;
use crate::tool::statics::{ParamRole, StaticTool};

/// Runs a tool call: receives the arguments object and the context, returns the result.
///
/// Implemented for every `Fn(Map<String, Value>, ToolContext) -> impl Future<Output = ToolResult>`
/// that is `Send + Sync + 'static` (an async closure works). The registry has
/// already checked that the arguments are a JSON object and, for a tool from
/// [`Tool::new`], that they fit its schema at the top level (required and
/// unknown parameters, JSON types, numeric bounds); nested values, string
/// formats and patterns are the handler's to check.
pub trait ToolHandler: Send + Sync + 'static {
    /// Starts the call.
    fn call(&self, args: Map<String, Value>, ctx: ToolContext) -> BoxFuture<ToolResult>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(Map<String, Value>, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    fn call(&self, args: Map<String, Value>, ctx: ToolContext) -> BoxFuture<ToolResult> {
        Box::pin(self(args, ctx))
    }
}

/// A `#[tool]` fn's handler: its static definition, and the layout of its
/// arguments (JSON types for the messages, flattened fields).
struct StaticHandler {
    def: &'static StaticTool,
    layout: Arc<ArgLayout>,
}

impl ToolHandler for StaticHandler {
    fn call(&self, args: Map<String, Value>, ctx: ToolContext) -> BoxFuture<ToolResult> {
        (self.def.call)(Invocation::new(
            self.def,
            Arc::clone(&self.layout),
            args,
            ctx,
        ))
    }
}

/// A `#[toolset]` method's tool: its definition and the instance it is bound to.
struct BoundHandler {
    def: &'static StaticTool,
    layout: Arc<ArgLayout>,
    receiver: Arc<dyn Any + Send + Sync>,
}

impl ToolHandler for BoundHandler {
    fn call(&self, args: Map<String, Value>, ctx: ToolContext) -> BoxFuture<ToolResult> {
        (self.def.call)(
            Invocation::new(self.def, Arc::clone(&self.layout), args, ctx)
                .with_receiver(Arc::clone(&self.receiver)),
        )
    }
}

/// A `#[tool]` fn's argument check: its call shim run up to the point where
/// every argument is extracted and the unknown-parameter check has passed,
/// without calling the fn, so a call that can never run is refused before a
/// person is asked to approve it (the `check` stage of `execute`).
struct ArgCheck {
    def: &'static StaticTool,
    layout: Arc<ArgLayout>,
    receiver: Option<Arc<dyn Any + Send + Sync>>,
}

impl fmt::Debug for ArgCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgCheck")
            .field("tool", &self.def.name)
            .finish_non_exhaustive()
    }
}

impl ArgCheck {
    /// `Err` with the shim's own argument error (the same result the call
    /// would end with); `Ok` when the arguments decode, or when the check
    /// cannot tell (a panic in a `Deserialize` impl is left to the invoke
    /// stage's containment).
    async fn run(&self, args: Map<String, Value>, ctx: ToolContext) -> Result<(), ToolResult> {
        let passed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut invocation = Invocation::new(self.def, Arc::clone(&self.layout), args, ctx);
        invocation.checked = Some(Arc::clone(&passed));
        if let Some(receiver) = &self.receiver {
            invocation = invocation.with_receiver(Arc::clone(receiver));
        }
        let started =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.def.call)(invocation)));
        let Ok(future) = started else {
            return Ok(());
        };
        let Ok(result) =
            futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(future)).await
        else {
            return Ok(());
        };
        if passed.load(std::sync::atomic::Ordering::SeqCst) {
            Ok(())
        } else {
            Err(result)
        }
    }
}

/// A registered tool: its [`ToolSpec`] and its handler. Cheap to clone (two `Arc`s).
///
/// ```
/// use tool_core::{Tool, ToolSpec, ToolResult, ToolRegistry, ToolContext};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let spec = ToolSpec::new(
///     "echo",
///     "Repeat the given text.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
/// );
/// let tool = Tool::new(spec, |args: serde_json::Map<String, serde_json::Value>, _ctx| async move {
///     ToolResult::ok(args["text"].as_str().unwrap_or_default())
/// })?;
/// let mut registry = ToolRegistry::new();
/// registry.register(tool)?;
/// let result = registry.execute("echo", json!({"text": "hi"}), &ToolContext::new()).await;
/// assert_eq!(result.output, "hi");
/// # Ok::<(), tool_core::RegistryError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Tool {
    spec: Arc<ToolSpec>,
    handler: Arc<dyn ToolHandler>,
    derived: Arc<Derived>,
}

/// What the pipeline needs from the spec, computed once.
#[derive(Debug)]
pub(crate) struct Derived {
    pub(crate) param_types: ParamTypes,
    pub(crate) url_patterns: Vec<UrlPattern>,
    /// A `#[tool]` fn's parameters (hidden and injected ones included), for
    /// the pipeline's context stage; empty for a tool built at run time.
    pub(crate) static_params: &'static [crate::tool::statics::StaticParam],
    /// A `#[tool]` fn's argument check (`None` for a tool built at run time,
    /// whose handler checks its own arguments when it runs).
    arg_check: Option<ArgCheck>,
    /// Whether the arguments are checked against the spec's schema before
    /// the handler runs ([`crate::args::validate`]): a `Map` handler's tool
    /// from [`Tool::new`]; not a `#[tool]` fn's or [`Tool::typed`]'s, which
    /// decode their arguments themselves.
    schema_check: bool,
}

impl Derived {
    fn from_spec(spec: &ToolSpec) -> Result<Self, RegistryError> {
        let url_patterns = spec
            .url_patterns
            .iter()
            .map(|p| UrlPattern::parse(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| RegistryError::InvalidSpec {
                name: spec.name.clone(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            param_types: ParamTypes::from_parameters(&spec.parameters),
            url_patterns,
            static_params: &[],
            arg_check: None,
            schema_check: true,
        })
    }
}

impl Tool {
    /// A tool from a spec and a handler.
    ///
    /// # Errors
    /// [`RegistryError::InvalidName`] when the name breaks `^[a-zA-Z0-9_-]{1,64}$`,
    /// [`RegistryError::InvalidSpec`] when the description is blank, the
    /// parameters schema is not an object schema (`"type": "object"`), a URL
    /// pattern does not parse, a tag breaks `^[a-z0-9][a-z0-9_-]{0,31}$`, or an
    /// editable parameter is not in the schema.
    ///
    /// The pipeline checks the arguments against `spec.parameters` before
    /// `handler` runs (and before a person is asked to approve the call): a
    /// missing required parameter, an unknown one when the schema says
    /// `"additionalProperties": false`, a top-level value of a JSON type its
    /// schema does not admit, or a number outside its `minimum`/`maximum` is
    /// `invalid_arguments` naming the parameter, as for a `#[tool]` fn.
    /// Nested values, string formats and lengths, patterns and parameters
    /// whose schema states no type are the handler's to check.
    pub fn new(spec: ToolSpec, handler: impl ToolHandler) -> Result<Self, RegistryError> {
        check_spec(&spec)?;
        let derived = Derived::from_spec(&spec)?;
        Ok(Self {
            spec: Arc::new(spec),
            handler: Arc::new(handler),
            derived: Arc::new(derived),
        })
    }

    /// A tool whose arguments are the fields of one type `A`, for tools built
    /// at run time (a description made from what is installed, a tool bound
    /// to a value) that still want the framework's typed path: the
    /// parameters schema is `A`'s (its fields are the top-level parameters,
    /// described by their doc comments, required unless `Option` or
    /// `#[serde(default)]`; `spec.parameters` is replaced), and the arguments
    /// are decoded into `A` by the same decoder as an `#[arg(flatten)]`
    /// struct of a `#[tool]` fn, so a missing, mistyped or unknown parameter
    /// gets the pipeline's own message before `handler` runs.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use tool_core::{Tool, ToolContext, ToolResult, ToolSpec};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Greet {
    ///     /// Who to greet.
    ///     name: String,
    /// }
    ///
    /// let installed = ["en", "fr"];
    /// let spec = ToolSpec::new("greet", "", serde_json::Value::Null)
    ///     .with_description(format!("Greet someone. Languages: {}.", installed.join(", ")));
    /// let tool = Tool::typed(spec, |a: Greet, _ctx: ToolContext| async move {
    ///     ToolResult::ok(format!("hello {}", a.name))
    /// })
    /// .unwrap();
    /// assert_eq!(tool.spec().parameters["required"], serde_json::json!(["name"]));
    /// ```
    ///
    /// # Errors
    /// As [`Tool::new`], and [`RegistryError::InvalidSpec`] when `A`'s schema
    /// is not a plain object schema (an enum, a map, a newtype of a scalar)
    /// or a field's name breaks the parameter-name rule.
    pub fn typed<A, F, Fut>(mut spec: ToolSpec, handler: F) -> Result<Self, RegistryError>
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: crate::result::into_result::IntoToolResult,
    {
        let param = typed_param::<A>();
        let (parameters, flattened) = schema::parameters_schema(
            &spec.name,
            std::slice::from_ref(&param),
            &std::collections::BTreeMap::new(),
        )?;
        spec.parameters = parameters;
        let layout = Arc::new(ArgLayout {
            types: ParamTypes::from_parameters(&spec.parameters),
            flattened,
        });
        let name: Arc<str> = Arc::from(spec.name.as_str());
        let handler = move |mut args: Map<String, Value>, ctx: ToolContext| {
            let call = match crate::args::decode::flattened::<A>(
                &name, &layout, 0, &param, &mut args, &ctx,
            ) {
                Ok(a) => match crate::args::decode::no_unknown(&name, &layout, &args) {
                    Ok(()) => Ok(handler(a, ctx)),
                    Err(refused) => Err(refused),
                },
                Err(refused) => Err(refused),
            };
            async move {
                match call {
                    Ok(fut) => {
                        crate::result::into_result::IntoToolResult::into_tool_result(fut.await)
                    }
                    Err(refused) => refused,
                }
            }
        };
        Self::new(spec, handler).map(Self::decodes_own_arguments)
    }

    /// This fresh tool without the schema check: its handler decodes the
    /// arguments with the framework's own decoder (better messages, nested values).
    fn decodes_own_arguments(self) -> Self {
        self.without_schema_check()
    }

    /// This tool with [`Tool::new`]'s schema check turned off: for a handler
    /// that hands the arguments to a peer which checks them against the
    /// whole schema itself (an imported MCP server's tool), so that the
    /// pipeline's top-level check, which reads only part of JSON Schema,
    /// can never refuse what the peer accepts. Call it on the tool
    /// `Tool::new` returned, before it is registered or cloned (a tool
    /// already shared keeps its check).
    #[must_use]
    pub fn without_schema_check(mut self) -> Self {
        if let Some(derived) = Arc::get_mut(&mut self.derived) {
            derived.schema_check = false;
        }
        self
    }

    /// The tool generated by `#[tool]` for `def`: parses the doc comment and
    /// builds the parameters schema (once per registry build).
    ///
    /// # Errors
    /// As [`Tool::new`]; [`RegistryError::ParameterCollision`] when a field
    /// of an `#[arg(flatten)]` struct has the name of another parameter or
    /// field; [`RegistryError::InvalidSpec`] when a flattened type is not a
    /// struct with named fields, a flattened field's name breaks the
    /// parameter-name rule (`tool_rules::names::PARAM_NAME_RULE`), a
    /// `display(params(..))` entry names no parameter of a tool with
    /// flattened fields, or an entry of the doc comment's `# Arguments` /
    /// `Args:` section names no parameter nor flattened field (with a
    /// did-you-mean; the macro already refuses the names it can see). Every problem is reported, several as
    /// [`RegistryError::Many`].
    pub fn from_static(def: &'static StaticTool) -> Result<Self, RegistryError> {
        let (spec, layout) = spec_from_static(def)?;
        let check = ArgCheck {
            def,
            layout: Arc::clone(&layout),
            receiver: None,
        };
        Self::new(spec, StaticHandler { def, layout }).map(|t| t.with_static_params(def, check))
    }

    /// This fresh tool with `def`'s parameters known to the pipeline.
    fn with_static_params(mut self, def: &'static StaticTool, check: ArgCheck) -> Self {
        if let Some(derived) = Arc::get_mut(&mut self.derived) {
            derived.static_params = def.params;
            derived.arg_check = Some(check);
            derived.schema_check = false;
        }
        self
    }

    /// Checks the arguments as the call would, without running the tool:
    /// `Err` with the call's own argument error. A tool built at run time
    /// with a `Map` handler is checked against its schema ([`Tool::new`]).
    pub(crate) async fn check_arguments(
        &self,
        args: &Map<String, Value>,
        ctx: &ToolContext,
    ) -> Result<(), ToolResult> {
        match &self.derived.arg_check {
            Some(check) => check.run(args.clone(), ctx.clone()).await,
            None => self.schema_checked(args),
        }
    }

    /// The schema check of a `Map` handler's tool ([`Tool::new`]); `Ok` for others.
    #[allow(
        clippy::result_large_err,
        reason = "the Err is the call's final ToolResult, returned as is on a rare path"
    )]
    fn schema_checked(&self, args: &Map<String, Value>) -> Result<(), ToolResult> {
        if !self.derived.schema_check {
            return Ok(());
        }
        crate::args::validate::against_schema(self.name(), &self.derived.param_types, args)
    }

    /// The tool of a `#[toolset]` method, bound to `receiver` (its instance).
    pub(crate) fn from_static_bound(
        def: &'static StaticTool,
        receiver: Arc<dyn Any + Send + Sync>,
    ) -> Result<Self, RegistryError> {
        let (spec, layout) = spec_from_static(def)?;
        let check = ArgCheck {
            def,
            layout: Arc::clone(&layout),
            receiver: Some(Arc::clone(&receiver)),
        };
        Self::new(
            spec,
            BoundHandler {
                def,
                layout,
                receiver,
            },
        )
        .map(|t| t.with_static_params(def, check))
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// A copy of this tool under another name (same handler).
    ///
    /// # Errors
    /// [`RegistryError::InvalidName`] when `name` breaks the name rule.
    pub fn renamed(&self, name: impl Into<String>) -> Result<Self, RegistryError> {
        let mut spec = (*self.spec).clone();
        spec.name = name.into();
        check_spec(&spec)?;
        Ok(Self {
            spec: Arc::new(spec),
            handler: Arc::clone(&self.handler),
            derived: Arc::clone(&self.derived),
        })
    }

    pub(crate) fn derived(&self) -> &Derived {
        &self.derived
    }

    /// Whether the tool is offered on `page_url` (always, when it has no `url_patterns`).
    pub fn available_on(&self, page_url: Option<&str>) -> bool {
        crate::governance::url_pattern::any_match(&self.derived.url_patterns, page_url)
    }

    pub(crate) fn start(
        &self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<ToolResult> {
        if let Err(refused) = self.schema_checked(&args) {
            return Box::pin(std::future::ready(refused));
        }
        self.handler.call(args, ctx)
    }
}

/// The spec `#[tool]` generated for `def` and the layout of its arguments:
/// the doc comment parsed, the parameters schema built (once per registry
/// build).
fn spec_from_static(def: &'static StaticTool) -> Result<(ToolSpec, Arc<ArgLayout>), RegistryError> {
    let parsed = doc_comment::parse(def.doc);
    let (parameters, flattened) = schema::parameters_schema(def.name, def.params, &parsed.params)?;
    let properties = parameters.get("properties").and_then(Value::as_object);
    let is_property = |name: &str| properties.is_some_and(|props| props.contains_key(name));
    // An argument-section entry that names no parameter: the macro refuses
    // it at compile time where it sees every name; the names it cannot see
    // (a flattened struct's fields, an `include_str!` doc) are checked here.
    let mut problems: Vec<RegistryError> = Vec::new();
    for documented in parsed.params.keys() {
        let known = is_property(documented)
            || def
                .params
                .iter()
                .any(|p| p.name == documented.as_str() || p.rust_name == documented.as_str());
        if known {
            continue;
        }
        let names = properties
            .into_iter()
            .flat_map(|props| props.keys().map(String::as_str))
            .chain(def.params.iter().map(|p| p.name));
        let hint = tool_rules::suggest::did_you_mean(documented, names)
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        problems.push(RegistryError::InvalidSpec {
            name: def.name.to_owned(),
            reason: format!(
                "the doc comment's argument section describes `{documented}`, which is no parameter or flattened field of the tool{hint}"
            ),
        });
    }
    let o = &def.options;
    // The macro checks display names against the fn's parameters, except
    // for names it cannot see: those of a tool with flattened fields.
    let mut reported = std::collections::BTreeSet::new();
    for name in o
        .display
        .iter()
        .flat_map(|d| d.params.iter())
        .map(|(name, _)| *name)
        .filter(|name| !is_property(name) && !def.params.iter().any(|p| p.name == *name))
    {
        if !reported.insert(name) {
            continue;
        }
        problems.push(RegistryError::InvalidSpec {
            name: def.name.to_owned(),
            reason: format!("`display` names the parameter `{name}`, which the tool does not have"),
        });
    }
    let mut spec = ToolSpec::new(def.name, parsed.description, parameters);
    spec.kind = o.kind;
    spec.flags = o.flags;
    spec.tags = o.tags.iter().map(|s| (*s).to_owned()).collect();
    spec.editable_params = o.editable_params.iter().map(|s| (*s).to_owned()).collect();
    spec.url_patterns = o.url_patterns.iter().map(|s| (*s).to_owned()).collect();
    spec.hidden_params = def
        .params
        .iter()
        .filter(|p| !matches!(p.role, ParamRole::Visible | ParamRole::Flattened))
        .map(|p| p.rust_name.to_owned())
        .collect();
    spec.display = o
        .display
        .iter()
        .map(|d| {
            (
                d.lang.to_owned(),
                DisplayName {
                    name: d.name.map(str::to_owned),
                    params: d
                        .params
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                },
            )
        })
        .collect();
    spec.timeout = o.timeout_ms.map(Duration::from_millis);
    spec.task_support = o.task_support;
    spec.input_examples = parsed.examples;
    spec.output_schema = def.output_schema.and_then(schema::output_schema);
    spec.source = Some(SourceLocation {
        file: def.file.to_owned(),
        line: def.line,
    });
    // Every problem at once (a wrong display name and a wrong editable
    // name are two fixes), as `Many` when there are several.
    problems.extend(spec_problems(&spec));
    RegistryError::from_all(problems)?;
    let layout = Arc::new(ArgLayout {
        types: ParamTypes::from_parameters(&spec.parameters),
        flattened,
    });
    Ok((spec, layout))
}

/// The one flattened parameter of a [`Tool::typed`] tool: `A`'s fields.
fn typed_param<A: schemars::JsonSchema>() -> crate::tool::statics::StaticParam {
    fn flat_schema<A: schemars::JsonSchema>(
        generator: &mut schemars::SchemaGenerator,
    ) -> schemars::Schema {
        A::json_schema(generator)
    }
    crate::tool::statics::StaticParam {
        name: "args",
        rust_name: "args",
        rust_type: std::any::type_name::<A>(),
        concrete_type: Some(std::any::type_name::<A>),
        description: None,
        role: ParamRole::Flattened,
        optional: false,
        schema: Some(flat_schema::<A>),
        default: None,
        inject: None,
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

/// The first problem of `spec` (see [`Tool::new`]).
fn check_spec(spec: &ToolSpec) -> Result<(), RegistryError> {
    match spec_problems(spec).into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Every problem of `spec`, in the order [`Tool::new`] lists them.
fn spec_problems(spec: &ToolSpec) -> Vec<RegistryError> {
    let mut problems = Vec::new();
    // OpenAI and Anthropic require tool names to match ^[a-zA-Z0-9_-]{1,64}$.
    if !is_valid_tool_name(&spec.name) {
        problems.push(RegistryError::InvalidName {
            name: spec.name.clone(),
        });
    }
    if spec.description.trim().is_empty() {
        problems.push(RegistryError::InvalidSpec {
            name: spec.name.clone(),
            reason: "the description is empty; models choose tools by their description".to_owned(),
        });
    }
    // Every provider requires the arguments to be a JSON object.
    if spec.parameters.get("type").and_then(Value::as_str) != Some("object") {
        problems.push(RegistryError::InvalidSpec {
            name: spec.name.clone(),
            reason: "the parameters schema must have `\"type\": \"object\"` at its root (providers send arguments as one JSON object)".to_owned(),
        });
    }
    // The tag rule the macro checks at compile time (`tool_rules::names`).
    if let Some((tag, problem)) = spec
        .tags
        .iter()
        .find_map(|t| tool_rules::names::tag_problem(t).map(|p| (t, p)))
    {
        problems.push(RegistryError::InvalidSpec {
            name: spec.name.clone(),
            reason: format!(
                "invalid tag `{tag}`: {problem}; {}",
                tool_rules::names::TAG_RULE
            ),
        });
    }
    let names = spec.parameter_names();
    for bad in spec
        .editable_params
        .iter()
        .filter(|p| !names.contains(&p.as_str()))
    {
        problems.push(RegistryError::InvalidSpec {
            name: spec.name.clone(),
            reason: format!("editable parameter `{bad}` is not a model-visible parameter"),
        });
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec::new("t", "A tool.", json!({"type": "object"}))
    }

    #[test]
    fn tags_follow_the_macros_rule() {
        let ok = Tool::new(spec().with_tags(["fs", "search", "fs"]), |_, _| async {
            ToolResult::ok("")
        })
        .unwrap();
        assert_eq!(ok.spec().tags, ["fs", "search"]);
        let err = Tool::new(spec().with_tags(["Git"]), |_, _| async {
            ToolResult::ok("")
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            RegistryError::InvalidSpec {
                name: "t".into(),
                reason:
                    "invalid tag `Git`: `G` is not allowed; tags match ^[a-z0-9][a-z0-9_-]{0,31}$"
                        .into()
            }
            .to_string()
        );
    }
}
