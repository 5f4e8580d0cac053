//! [`Catalog`]: the prompts, resources and resource templates an
//! [`McpServer`](crate::McpServer) offers beside its tools, with argument
//! completion, resource subscriptions and list changes.
//!
//! Protocol-only (MCP's `prompts/*`, `resources/*`, `completion/complete`),
//! so it lives in tool-mcp, not tool-core (docs/ARCHITECTURE.md: tool-core
//! is the runtime of tools; a provider API has no prompts or resources).
//! Entries come from `#[prompt]` / `#[resource]` fns ([`Catalog::declared`])
//! and from this builder API at run time.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, RwLock};

use rmcp::model::{
    CompletionInfo, PromptArgument, PromptMessage, Resource as McpResource, ResourceContents,
    ResourceTemplate as McpResourceTemplate,
};
use tokio::sync::{broadcast, watch};
use tool_rules::text::{Clip, clip};

/// A boxed future of a prompt's render or a resource's read.
type BoxFuture<T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Longest URI (bytes) a client may read, subscribe to or complete against:
/// 8 KiB. Longer ones are refused with "invalid params".
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// Most completion values sent in one `completion/complete` answer: 100,
/// the protocol's own limit; `total` and `hasMore` tell the rest.
pub const MAX_COMPLETIONS: usize = CompletionInfo::MAX_VALUES;

/// Most resource URIs one client session may be subscribed to at once
/// (1024); a further `resources/subscribe` is refused.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The arguments of one `prompts/get` (argument name → value; MCP prompt
/// arguments are strings), or the variables of a URI matched against a
/// resource template.
pub type Arguments = BTreeMap<String, String>;

/// Why a prompt or a resource could not be produced: the message goes to
/// the client as the error's text (`-32603` internal error for a failed
/// render or read, `-32602` for bad arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError(pub String);

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CatalogError {}

impl From<String> for CatalogError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for CatalogError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

type RenderFn = Arc<
    dyn Fn(Arguments, tool_core::ToolContext) -> BoxFuture<Result<Vec<PromptMessage>, CatalogError>>
        + Send
        + Sync,
>;
type ReadFn =
    Arc<dyn Fn(String, Arguments) -> BoxFuture<Result<ResourceBody, CatalogError>> + Send + Sync>;
type CompleteFn = Arc<dyn Fn(&str, &Arguments) -> Vec<String> + Send + Sync>;

/// Suggestions for one argument of a prompt or a resource template
/// (`completion/complete`): given the text typed so far and the values of
/// the other arguments already filled in, the candidates, best first. At
/// most [`MAX_COMPLETIONS`] are sent; the total is reported.
#[derive(Clone)]
pub struct Completer(CompleteFn);

impl fmt::Debug for Completer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Completer")
    }
}

impl Completer {
    /// A completer computed by `f(typed so far, other arguments)`.
    pub fn new(f: impl Fn(&str, &Arguments) -> Vec<String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// The values of `values` that start with the typed text (case
    /// insensitive), in the order given.
    pub fn from_values<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        Self::new(move |typed, _| {
            let typed = typed.to_lowercase();
            values
                .iter()
                .filter(|v| v.to_lowercase().starts_with(&typed))
                .cloned()
                .collect()
        })
    }

    /// The completion answer for `typed`: the first [`MAX_COMPLETIONS`]
    /// candidates, the total and whether more exist.
    pub(crate) fn complete(&self, typed: &str, others: &Arguments) -> CompletionInfo {
        let mut values = (self.0)(typed, others);
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        let has_more = total > values.len();
        let total = u32::try_from(total).unwrap_or(u32::MAX);
        CompletionInfo::with_pagination(values, Some(total), has_more).unwrap_or_default()
    }
}

/// A prompt template (`prompts/list`, `prompts/get`): a name, a
/// description, string arguments, and a render function producing the
/// messages (text, images, audio, embedded resources, resource links:
/// rmcp's [`PromptMessage`]).
///
/// ```
/// use tool_mcp::catalog::Prompt;
/// use tool_mcp::rmcp::model::{PromptMessage, Role};
///
/// let prompt = Prompt::new("greet", "Greets someone.", |args| async move {
///     let name = args.get("name").cloned().unwrap_or_default();
///     Ok::<_, String>(vec![PromptMessage::new_text(Role::User, format!("Say hello to {name}."))])
/// })
/// .with_argument("name", "Whom to greet.", true);
/// assert_eq!(prompt.name(), "greet");
/// ```
#[derive(Clone)]
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: String,
    arguments: Vec<PromptArgument>,
    completers: HashMap<String, Completer>,
    render: RenderFn,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt named `name` whose messages `render(arguments)` produces;
    /// an `Err` is sent to the client as an internal error with its text.
    /// Arguments are declared with [`with_argument`](Self::with_argument);
    /// required ones are checked before `render` runs.
    pub fn new<F, Fut, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        render: F,
    ) -> Self
    where
        F: Fn(Arguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, E>> + Send + 'static,
        E: fmt::Display,
    {
        let render = Arc::new(render);
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            arguments: Vec::new(),
            completers: HashMap::new(),
            render: Arc::new(move |args, _ctx| {
                let fut = render(args);
                Box::pin(async move { fut.await.map_err(|e| CatalogError(e.to_string())) })
            }),
        }
    }

    /// [`new`](Self::new) for a render function that also takes a context:
    /// under [`McpServer`](crate::McpServer) it can ask the client for input
    /// with [`crate::input`] (an input-required result on `prompts/get` in
    /// the 2026-07-28 era, server requests in 2025-11-25 sessions); outside
    /// a server ([`render`](Self::render)) the context is empty.
    pub fn with_context<F, Fut, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        render: F,
    ) -> Self
    where
        F: Fn(Arguments, tool_core::ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, E>> + Send + 'static,
        E: fmt::Display,
    {
        let render = Arc::new(render);
        let mut prompt = Self::new(name, description, |_args| async {
            Ok::<_, String>(Vec::new())
        });
        prompt.render = Arc::new(move |args, ctx| {
            let fut = render(args, ctx);
            Box::pin(async move { fut.await.map_err(|e| CatalogError(e.to_string())) })
        });
        prompt
    }

    /// Declares an argument (a string); `required` ones must be given.
    #[must_use]
    pub fn with_argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let mut argument = PromptArgument::new(name).with_required(required);
        let description = description.into();
        if !description.is_empty() {
            argument = argument.with_description(description);
        }
        self.arguments.push(argument);
        self
    }

    /// A human-readable title for clients' menus.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Suggestions for the argument `argument` (`completion/complete`).
    #[must_use]
    pub fn with_completion(mut self, argument: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(argument.into(), completer);
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The declared arguments, in order.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.arguments
    }

    /// The `prompts/list` entry.
    pub(crate) fn definition(&self) -> rmcp::model::Prompt {
        let arguments = (!self.arguments.is_empty()).then(|| self.arguments.clone());
        let mut prompt =
            rmcp::model::Prompt::new(self.name.clone(), Some(self.description.clone()), arguments);
        if let Some(title) = &self.title {
            prompt = prompt.with_title(title.clone());
        }
        prompt
    }

    /// Renders the prompt: unknown and missing required arguments are
    /// refused before `render` runs.
    ///
    /// # Errors
    /// [`GetError::Arguments`] for bad arguments, [`GetError::Failed`] when
    /// the render function fails.
    pub async fn render(&self, arguments: Arguments) -> Result<Vec<PromptMessage>, GetError> {
        self.render_in(arguments, tool_core::ToolContext::new())
            .await
    }

    /// [`render`](Self::render) with `ctx` as the context of a render
    /// function made by [`with_context`](Self::with_context).
    ///
    /// # Errors
    /// As [`render`](Self::render).
    pub async fn render_in(
        &self,
        arguments: Arguments,
        ctx: tool_core::ToolContext,
    ) -> Result<Vec<PromptMessage>, GetError> {
        for argument in &self.arguments {
            if argument.required == Some(true) && !arguments.contains_key(&argument.name) {
                return Err(GetError::Arguments(format!(
                    "prompt `{}` needs the argument `{}`",
                    self.name, argument.name
                )));
            }
        }
        if let Some(unknown) = arguments
            .keys()
            .find(|k| !self.arguments.iter().any(|a| &a.name == *k))
        {
            let known: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
            return Err(GetError::Arguments(format!(
                "prompt `{}` has no argument `{}` (its arguments: {})",
                self.name,
                clip(unknown, Clip::chars(64)),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        }
        (self.render)(arguments, ctx)
            .await
            .map_err(|e| GetError::Failed(e.0))
    }
}

/// Why [`Prompt::render`] or a resource read failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GetError {
    /// The client's arguments or URI do not fit (`-32602`).
    Arguments(String),
    /// The prompt's or resource's own function failed (`-32603`).
    Failed(String),
}

impl fmt::Display for GetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Arguments(m) | Self::Failed(m) => f.write_str(m),
        }
    }
}

/// What reading a resource produced: text or bytes (sent base64-encoded
/// as a `blob`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceBody {
    /// Text (`text` on the wire).
    Text(String),
    /// Bytes (`blob`, base64, on the wire).
    Blob(Vec<u8>),
}

impl From<String> for ResourceBody {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for ResourceBody {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<Vec<u8>> for ResourceBody {
    fn from(bytes: Vec<u8>) -> Self {
        Self::Blob(bytes)
    }
}

impl ResourceBody {
    /// The `contents` entry for `uri`, with `mime_type` when known.
    pub(crate) fn into_contents(self, uri: &str, mime_type: Option<&str>) -> ResourceContents {
        use base64::Engine as _;
        let contents = match self {
            Self::Text(text) => ResourceContents::text(text, uri),
            Self::Blob(bytes) => {
                ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
            }
        };
        match mime_type {
            Some(mime) => contents.with_mime_type(mime),
            None => contents,
        }
    }
}

/// Shared fields of a resource and a resource template.
#[derive(Clone, Default)]
struct Info {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
}

/// A resource with a fixed URI (`resources/list`, `resources/read`),
/// read by a function each time a client reads it.
///
/// ```
/// use tool_mcp::catalog::Resource;
///
/// let notes = Resource::text("notes://today", "today", "Buy milk.").with_mime_type("text/plain");
/// assert_eq!(notes.uri(), "notes://today");
/// ```
#[derive(Clone)]
pub struct Resource {
    uri: String,
    info: Info,
    /// Its size in bytes, when known (`size` in `resources/list`).
    size: Option<u64>,
    read: ReadFn,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// A resource at `uri` named `name` whose content `read()` produces
    /// (text or bytes, [`ResourceBody`]); an `Err` goes to the client as an
    /// internal error with its text.
    pub fn new<F, Fut, B, E>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<B, E>> + Send + 'static,
        B: Into<ResourceBody>,
        E: fmt::Display,
    {
        let read = Arc::new(read);
        Self {
            uri: uri.into(),
            info: Info {
                name: name.into(),
                ..Info::default()
            },
            size: None,
            read: Arc::new(move |_uri, _vars| {
                let fut = read();
                Box::pin(async move {
                    fut.await
                        .map(Into::into)
                        .map_err(|e| CatalogError(e.to_string()))
                })
            }),
        }
    }

    /// A resource whose content is always `text`.
    pub fn text(uri: impl Into<String>, name: impl Into<String>, text: impl Into<String>) -> Self {
        let text: Arc<str> = Arc::from(text.into());
        Self::new(uri, name, move || {
            let text = text.to_string();
            async move { Ok::<_, CatalogError>(text) }
        })
    }

    /// A resource whose content is always `bytes`.
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        let bytes: Arc<[u8]> = Arc::from(bytes.into());
        Self::new(uri, name, move || {
            let bytes = bytes.to_vec();
            async move { Ok::<_, CatalogError>(bytes) }
        })
    }

    /// Its description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Its MIME type (`text/plain`, `image/png`, ...).
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.info.mime_type = Some(mime_type.into());
        self
    }

    /// A human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Its size in bytes (before any base64 encoding), listed as `size` in
    /// `resources/list` so a client can tell a large resource before
    /// reading it. Unset by default.
    #[must_use]
    pub fn with_size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    fn definition(&self) -> McpResource {
        let mut r = McpResource::new(self.uri.clone(), self.info.name.clone());
        r.size = self.size;
        r.title.clone_from(&self.info.title);
        r.description.clone_from(&self.info.description);
        r.mime_type.clone_from(&self.info.mime_type);
        r
    }
}

/// One part of a URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+name}`) may match `/`, `?` and `#`.
    Var {
        name: String,
        reserved: bool,
    },
}

/// A URI template of RFC 6570 levels 1 and 2 (`{name}` and `{+name}`; a
/// name is ASCII letters, digits and `_`), matched against URIs: `{name}`
/// takes the shortest non-empty text up to the next literal without `/`,
/// `?` or `#`; `{+name}` may contain them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `text`.
    ///
    /// # Errors
    /// A message naming the problem: an unclosed or empty `{}`, an operator
    /// other than `+`, a variable name outside `[A-Za-z0-9_]`, two
    /// variables with nothing between them, or a variable used twice.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest
                        .find('}')
                        .ok_or_else(|| format!("URI template `{text}`: a `{{` is never closed"))?;
                    let inner = &rest[1..end];
                    let (reserved, name) = match inner.strip_prefix('+') {
                        Some(name) => (true, name),
                        None => (false, inner),
                    };
                    if name.is_empty()
                        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        return Err(format!(
                            "URI template `{text}`: `{{{inner}}}` is not a variable this server supports (write `{{name}}` or `{{+name}}`, name of ASCII letters, digits and `_`)"
                        ));
                    }
                    if matches!(parts.last(), Some(Part::Var { .. })) {
                        return Err(format!(
                            "URI template `{text}`: two variables with nothing between them cannot be told apart"
                        ));
                    }
                    if parts
                        .iter()
                        .any(|p| matches!(p, Part::Var { name: n, .. } if n == name))
                    {
                        return Err(format!(
                            "URI template `{text}`: variable `{name}` appears twice"
                        ));
                    }
                    parts.push(Part::Var {
                        name: name.to_owned(),
                        reserved,
                    });
                    rest = &rest[end + 1..];
                }
                Some(i) => {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(Self {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values when `uri` matches, else `None`. Linear in
    /// the URI's length per part (no backtracking).
    pub fn matches(&self, uri: &str) -> Option<Arguments> {
        let mut vars = Arguments::new();
        let mut rest = uri;
        let mut i = 0;
        while i < self.parts.len() {
            match &self.parts[i] {
                Part::Literal(lit) => rest = rest.strip_prefix(lit.as_str())?,
                Part::Var { name, reserved } => {
                    let end = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || (!reserved && value.contains(['/', '?', '#'])) {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
            i += 1;
        }
        rest.is_empty().then_some(vars)
    }
}

/// A family of resources whose URIs match a [`UriTemplate`]
/// (`resources/templates/list`; `resources/read` of a matching URI calls
/// the read function with the URI and its variables).
///
/// ```
/// use tool_mcp::catalog::ResourceTemplate;
///
/// let user = ResourceTemplate::new("users://{id}/profile", "profile", |_uri, vars| async move {
///     Ok::<_, String>(format!("profile of {}", vars["id"]))
/// })?;
/// assert!(user.template().matches("users://7/profile").is_some());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone)]
pub struct ResourceTemplate {
    template: UriTemplate,
    info: Info,
    completers: HashMap<String, Completer>,
    read: ReadFn,
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("template", &self.template.text)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// A template `uri_template` (RFC 6570 `{name}` / `{+name}`, see
    /// [`UriTemplate`]) named `name`, read by `read(uri, variables)`.
    ///
    /// # Errors
    /// The template's parse error ([`UriTemplate::parse`]).
    pub fn new<F, Fut, B, E>(
        uri_template: &str,
        name: impl Into<String>,
        read: F,
    ) -> Result<Self, String>
    where
        F: Fn(String, Arguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<B, E>> + Send + 'static,
        B: Into<ResourceBody>,
        E: fmt::Display,
    {
        let template = UriTemplate::parse(uri_template)?;
        let read = Arc::new(read);
        Ok(Self {
            template,
            info: Info {
                name: name.into(),
                ..Info::default()
            },
            completers: HashMap::new(),
            read: Arc::new(move |uri, vars| {
                let fut = read(uri, vars);
                Box::pin(async move {
                    fut.await
                        .map(Into::into)
                        .map_err(|e| CatalogError(e.to_string()))
                })
            }),
        })
    }

    /// Its description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// The MIME type of the resources it yields.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.info.mime_type = Some(mime_type.into());
        self
    }

    /// A human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Suggestions for the template variable `variable` (`completion/complete`
    /// with a `ref/resource` reference).
    #[must_use]
    pub fn with_completion(mut self, variable: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(variable.into(), completer);
        self
    }

    /// The parsed template.
    pub fn template(&self) -> &UriTemplate {
        &self.template
    }

    fn definition(&self) -> McpResourceTemplate {
        let mut t = McpResourceTemplate::new(self.template.text.clone(), self.info.name.clone());
        t.title.clone_from(&self.info.title);
        t.description.clone_from(&self.info.description);
        t.mime_type.clone_from(&self.info.mime_type);
        t
    }
}

/// The entries of a catalog (kept in insertion order, one per name/URI).
#[derive(Clone, Default)]
struct Entries {
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
}

/// What changed in a catalog: each counter grows by one per change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Versions {
    pub(crate) prompts: u64,
    pub(crate) resources: u64,
}

/// The prompts, resources and resource templates an
/// [`McpServer`](crate::McpServer) serves ([`McpServer::with_catalog`](crate::McpServer::with_catalog)).
///
/// Cheap to clone; clones share the entries, so adding or removing one
/// after serving has started reaches every client
/// (`notifications/prompts/list_changed`, `notifications/resources/list_changed`),
/// and [`notify_updated`](Self::notify_updated) tells the clients
/// subscribed to a URI that it changed (`notifications/resources/updated`).
/// Adding an entry whose name (prompt) or URI (resource, template) is taken
/// replaces it.
#[derive(Clone)]
pub struct Catalog {
    entries: Arc<RwLock<Entries>>,
    versions: watch::Sender<Versions>,
    updates: broadcast::Sender<String>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.read();
        f.debug_struct("Catalog")
            .field("prompts", &e.prompts.len())
            .field("resources", &e.resources.len())
            .field("templates", &e.templates.len())
            .finish()
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new()
    }
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self {
            entries: Arc::default(),
            versions: watch::Sender::new(Versions::default()),
            // Update notices waiting per listener; a slow listener misses
            // the oldest (it was told "updated" already for that URI or will
            // re-read anyway).
            updates: broadcast::channel(256).0,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Entries> {
        self.entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn change(&self, f: impl FnOnce(&mut Entries) -> (bool, bool)) {
        let (prompts, resources) = {
            let mut entries = self
                .entries
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&mut entries)
        };
        if prompts || resources {
            self.versions.send_modify(|v| {
                v.prompts += u64::from(prompts);
                v.resources += u64::from(resources);
            });
        }
    }

    /// Adds `prompt` (replacing one of the same name).
    pub fn add_prompt(&self, prompt: Prompt) {
        self.change(|e| {
            e.prompts.retain(|p| p.name != prompt.name);
            e.prompts.push(prompt);
            (true, false)
        });
    }

    /// Removes the prompt named `name`; whether there was one.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let mut found = false;
        self.change(|e| {
            let before = e.prompts.len();
            e.prompts.retain(|p| p.name != name);
            found = e.prompts.len() != before;
            (found, false)
        });
        found
    }

    /// Adds `resource` (replacing one at the same URI).
    pub fn add_resource(&self, resource: Resource) {
        self.change(|e| {
            e.resources.retain(|r| r.uri != resource.uri);
            e.resources.push(resource);
            (false, true)
        });
    }

    /// Removes the resource at `uri`; whether there was one.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let mut found = false;
        self.change(|e| {
            let before = e.resources.len();
            e.resources.retain(|r| r.uri != uri);
            found = e.resources.len() != before;
            (false, found)
        });
        found
    }

    /// Adds `template` (replacing one with the same template text).
    pub fn add_template(&self, template: ResourceTemplate) {
        self.change(|e| {
            e.templates
                .retain(|t| t.template.text != template.template.text);
            e.templates.push(template);
            (false, true)
        });
    }

    /// Removes the template written `uri_template`; whether there was one.
    pub fn remove_template(&self, uri_template: &str) -> bool {
        let mut found = false;
        self.change(|e| {
            let before = e.templates.len();
            e.templates.retain(|t| t.template.text != uri_template);
            found = e.templates.len() != before;
            (false, found)
        });
        found
    }

    /// Tells every client subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`); clients not subscribed hear
    /// nothing.
    pub fn notify_updated(&self, uri: impl Into<String>) {
        // No receiver (no client connected) is not an error.
        let _ = self.updates.send(uri.into());
    }

    /// Names of the prompts, in insertion order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.read().prompts.iter().map(|p| p.name.clone()).collect()
    }

    /// The prompt named `name`.
    pub fn prompt(&self, name: &str) -> Option<Prompt> {
        self.read().prompts.iter().find(|p| p.name == name).cloned()
    }

    pub(crate) fn prompt_definitions(&self) -> Vec<rmcp::model::Prompt> {
        self.read().prompts.iter().map(Prompt::definition).collect()
    }

    pub(crate) fn resource_definitions(&self) -> Vec<McpResource> {
        self.read()
            .resources
            .iter()
            .map(Resource::definition)
            .collect()
    }

    pub(crate) fn template_definitions(&self) -> Vec<McpResourceTemplate> {
        self.read()
            .templates
            .iter()
            .map(ResourceTemplate::definition)
            .collect()
    }

    /// Whether `uri` names a resource or matches a template.
    pub fn knows_uri(&self, uri: &str) -> bool {
        let e = self.read();
        e.resources.iter().any(|r| r.uri == uri)
            || e.templates
                .iter()
                .any(|t| t.template.matches(uri).is_some())
    }

    /// Reads `uri`: the resource with that URI, else the first template it
    /// matches. `None` when neither exists.
    ///
    /// # Errors
    /// [`GetError::Failed`] with the read function's message.
    pub async fn read_uri(&self, uri: &str) -> Option<Result<ResourceContents, GetError>> {
        let found = {
            let e = self.read();
            e.resources
                .iter()
                .find(|r| r.uri == uri)
                .map(|r| (r.read.clone(), Arguments::new(), r.info.mime_type.clone()))
                .or_else(|| {
                    e.templates.iter().find_map(|t| {
                        t.template
                            .matches(uri)
                            .map(|vars| (t.read.clone(), vars, t.info.mime_type.clone()))
                    })
                })
        };
        let (read, vars, mime) = found?;
        Some(
            read(uri.to_owned(), vars)
                .await
                .map(|body| body.into_contents(uri, mime.as_deref()))
                .map_err(|e| GetError::Failed(e.0)),
        )
    }

    /// Completes argument `argument` of the prompt named `name` from
    /// `typed`: empty when the prompt or argument has no completer; `None`
    /// when there is no such prompt.
    pub(crate) fn complete_prompt(
        &self,
        name: &str,
        argument: &str,
        typed: &str,
        others: &Arguments,
    ) -> Option<CompletionInfo> {
        let prompt = self.prompt(name)?;
        Some(
            prompt
                .completers
                .get(argument)
                .map(|c| c.complete(typed, others))
                .unwrap_or_default(),
        )
    }

    /// Completes variable `argument` of the template written `uri_template`;
    /// `None` when there is no such template.
    pub(crate) fn complete_template(
        &self,
        uri_template: &str,
        argument: &str,
        typed: &str,
        others: &Arguments,
    ) -> Option<CompletionInfo> {
        let completer = {
            let e = self.read();
            let template = e
                .templates
                .iter()
                .find(|t| t.template.text == uri_template)?;
            template.completers.get(argument).cloned()
        };
        Some(
            completer
                .map(|c| c.complete(typed, others))
                .unwrap_or_default(),
        )
    }

    /// Versions of the prompt and resource lists, changing with each edit.
    pub(crate) fn subscribe_changes(&self) -> watch::Receiver<Versions> {
        self.versions.subscribe()
    }

    /// URIs announced by [`notify_updated`](Self::notify_updated).
    pub(crate) fn subscribe_updates(&self) -> broadcast::Receiver<String> {
        self.updates.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_level_one_and_reserved_variables() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.matches("test://template/123/data").unwrap()["id"], "123");
        assert_eq!(t.matches("test://template/1/2/data"), None);
        assert_eq!(t.matches("test://template//data"), None);
        assert_eq!(t.matches("test://template/123/datax"), None);
        let files = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(files.matches("file:///a/b.txt").unwrap()["path"], "a/b.txt");
        let two = UriTemplate::parse("db://{table}/{row}").unwrap();
        let vars = two.matches("db://users/7").unwrap();
        assert_eq!(
            (vars["table"].as_str(), vars["row"].as_str()),
            ("users", "7")
        );
        assert_eq!(two.variables().collect::<Vec<_>>(), ["table", "row"]);
    }

    #[test]
    fn bad_templates_say_what_is_wrong() {
        for (text, needle) in [
            ("a://{id", "never closed"),
            ("a://{}", "not a variable"),
            ("a://{?q}", "not a variable"),
            ("a://{x}{y}", "nothing between"),
            ("a://{x}/{x}", "twice"),
        ] {
            let e = UriTemplate::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn completers_filter_by_prefix_and_cap_at_the_protocol_limit() {
        let c = Completer::from_values(["paris", "park", "lyon"]);
        let info = c.complete("PAR", &Arguments::new());
        assert_eq!(info.values, ["paris", "park"]);
        assert_eq!((info.total, info.has_more), (Some(2), Some(false)));
        let many = Completer::new(|_, _| (0..250).map(|i| i.to_string()).collect());
        let info = many.complete("", &Arguments::new());
        assert_eq!(info.values.len(), MAX_COMPLETIONS);
        assert_eq!((info.total, info.has_more), (Some(250), Some(true)));
    }

    #[tokio::test]
    async fn prompts_check_their_arguments_before_rendering() {
        use rmcp::model::Role;
        let p = Prompt::new("p", "d", |args: Arguments| async move {
            Ok::<_, String>(vec![PromptMessage::new_text(Role::User, args["a"].clone())])
        })
        .with_argument("a", "", true);
        let missing = p.render(Arguments::new()).await.unwrap_err();
        assert_eq!(
            missing,
            GetError::Arguments("prompt `p` needs the argument `a`".into())
        );
        let mut args = Arguments::new();
        args.insert("a".into(), "x".into());
        args.insert("b".into(), "y".into());
        let unknown = p.render(args.clone()).await.unwrap_err();
        assert!(
            unknown
                .to_string()
                .contains("no argument `b` (its arguments: a)"),
            "{unknown}"
        );
        args.remove("b");
        let messages = p.render(args).await.unwrap();
        assert_eq!(messages.len(), 1);
    }

    #[tokio::test]
    async fn catalog_reads_resources_and_templates_and_counts_changes() {
        let c = Catalog::new();
        let mut changes = c.subscribe_changes();
        c.add_resource(Resource::text("t://a", "a", "alpha").with_mime_type("text/plain"));
        c.add_resource(Resource::blob("t://b", "b", vec![0_u8, 1, 2]));
        c.add_template(
            ResourceTemplate::new("t://items/{id}", "item", |_, vars| async move {
                Ok::<_, String>(format!("item {}", vars["id"]))
            })
            .unwrap(),
        );
        assert!(changes.has_changed().unwrap());
        assert_eq!(changes.borrow_and_update().resources, 3);
        let text = serde_json::to_value(c.read_uri("t://a").await.unwrap().unwrap()).unwrap();
        assert_eq!(text["text"], "alpha");
        assert_eq!(text["mimeType"], "text/plain");
        let blob = serde_json::to_value(c.read_uri("t://b").await.unwrap().unwrap()).unwrap();
        assert_eq!(blob["blob"], "AAEC");
        let item = serde_json::to_value(c.read_uri("t://items/9").await.unwrap().unwrap()).unwrap();
        assert_eq!(item["text"], "item 9");
        assert!(c.read_uri("t://nothing").await.is_none());
        assert!(c.remove_resource("t://a"));
        assert!(!c.remove_resource("t://a"));
        assert!(!c.knows_uri("t://a"));
        assert_eq!(changes.borrow_and_update().resources, 4);
    }
}
