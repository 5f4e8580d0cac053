//! What the `#[prompt]` and `#[resource]` macros' output calls, re-exported
//! as the hidden `tool_mcp::__private`: the `inventory` entries that
//! [`Catalog::declared`](crate::Catalog::declared) collects, and the traits
//! that turn a fn's parameters and return value into a prompt's or a
//! resource's.

use std::fmt::Display;

use rmcp::model::{PromptMessage, Role};

use crate::catalog::{
    Arguments, Catalog, CatalogError, Prompt, Resource, ResourceBody, ResourceTemplate,
};

pub use inventory;

/// A boxed future, as the generated render and read fns return.
pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'static>>;

/// One `#[prompt]` fn: builds its [`Prompt`].
pub struct DeclaredPrompt {
    /// Builds the prompt.
    pub build: fn() -> Prompt,
}

/// A resource or a template, as one `#[resource]` fn declares.
pub enum Built {
    /// A fixed URI.
    Resource(Resource),
    /// A URI template.
    Template(ResourceTemplate),
}

/// One `#[resource]` fn: builds its resource or template.
pub struct DeclaredResource {
    /// Builds it; `Err` when the template does not parse.
    pub build: fn() -> Result<Built, String>,
}

inventory::collect!(DeclaredPrompt);
inventory::collect!(DeclaredResource);

/// A prompt parameter's type: `String` (a required argument) or
/// `Option<String>` (optional). MCP prompt arguments are strings.
#[diagnostic::on_unimplemented(
    message = "a #[prompt] parameter is `String` or `Option<String>`, not `{Self}`",
    label = "MCP prompt arguments are strings"
)]
pub trait PromptArg: Sized {
    /// Whether the argument must be given.
    const REQUIRED: bool;
    /// The value from the given argument (checked present when required).
    fn from_arg(value: Option<&String>) -> Self;
}

impl PromptArg for String {
    const REQUIRED: bool = true;
    fn from_arg(value: Option<&String>) -> Self {
        value.cloned().unwrap_or_default()
    }
}

impl PromptArg for Option<String> {
    const REQUIRED: bool = false;
    fn from_arg(value: Option<&String>) -> Self {
        value.cloned()
    }
}

/// Reads parameter `name` from a prompt's arguments or a URI's variables.
pub fn arg<T: PromptArg>(args: &Arguments, name: &str) -> T {
    T::from_arg(args.get(name))
}

/// A `#[prompt]` fn's return value: `Vec<PromptMessage>`, one
/// `PromptMessage`, or a `String` (one user message), or a `Result` of one
/// of these with a `Display` error.
#[diagnostic::on_unimplemented(
    message = "a #[prompt] fn returns `Vec<PromptMessage>`, `PromptMessage` or `String` (or a `Result` of one), not `{Self}`"
)]
pub trait IntoPromptMessages {
    /// The messages, or the error's text.
    ///
    /// # Errors
    /// The `Err` of a `Result` return value.
    fn into_messages(self) -> Result<Vec<PromptMessage>, CatalogError>;
}

impl IntoPromptMessages for Vec<PromptMessage> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CatalogError> {
        Ok(self)
    }
}

impl IntoPromptMessages for PromptMessage {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CatalogError> {
        Ok(vec![self])
    }
}

impl IntoPromptMessages for String {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CatalogError> {
        Ok(vec![PromptMessage::new_text(Role::User, self)])
    }
}

impl<T: IntoPromptMessages, E: Display> IntoPromptMessages for Result<T, E> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CatalogError> {
        self.map_err(|e| CatalogError(e.to_string()))?
            .into_messages()
    }
}

/// A `#[resource]` fn's return value: `String` (text), `Vec<u8>` (bytes),
/// a [`ResourceBody`], or a `Result` of one with a `Display` error.
#[diagnostic::on_unimplemented(
    message = "a #[resource] fn returns `String`, `Vec<u8>` or `ResourceBody` (or a `Result` of one), not `{Self}`"
)]
pub trait IntoResourceBody {
    /// The body, or the error's text.
    ///
    /// # Errors
    /// The `Err` of a `Result` return value.
    fn into_body(self) -> Result<ResourceBody, CatalogError>;
}

impl IntoResourceBody for String {
    fn into_body(self) -> Result<ResourceBody, CatalogError> {
        Ok(ResourceBody::Text(self))
    }
}

impl IntoResourceBody for Vec<u8> {
    fn into_body(self) -> Result<ResourceBody, CatalogError> {
        Ok(ResourceBody::Blob(self))
    }
}

impl IntoResourceBody for ResourceBody {
    fn into_body(self) -> Result<ResourceBody, CatalogError> {
        Ok(self)
    }
}

impl<T: IntoResourceBody, E: Display> IntoResourceBody for Result<T, E> {
    fn into_body(self) -> Result<ResourceBody, CatalogError> {
        self.map_err(|e| CatalogError(e.to_string()))?.into_body()
    }
}

/// The [`Prompt`] of a `#[prompt]` fn: `doc` split into description and
/// argument docs as `#[tool]` does, `params` (name, required) in order.
pub fn prompt(
    name: &str,
    doc: &str,
    params: &[(&str, bool)],
    render: fn(Arguments) -> BoxFuture<Result<Vec<PromptMessage>, CatalogError>>,
) -> Prompt {
    let (description, docs) = tool_core::__private::split_doc(doc);
    params.iter().fold(
        Prompt::new(name, description, render),
        |prompt, (param, required)| {
            let doc = docs.get(*param).map_or("", String::as_str);
            prompt.with_argument(*param, doc, *required)
        },
    )
}

/// The resource (fixed `uri`) or template (`uri` with `{variables}`) of a
/// `#[resource]` fn, named `name`, described by `doc`.
///
/// # Errors
/// The template's parse error.
pub fn resource(
    uri: &str,
    name: &str,
    doc: &str,
    mime_type: Option<&str>,
    read: fn(String, Arguments) -> BoxFuture<Result<ResourceBody, CatalogError>>,
) -> Result<Built, String> {
    let (description, _) = tool_core::__private::split_doc(doc);
    let description = (!description.is_empty()).then_some(description);
    if uri.contains('{') {
        let mut t = ResourceTemplate::new(uri, name, read)?;
        if let Some(d) = description {
            t = t.with_description(d);
        }
        if let Some(m) = mime_type {
            t = t.with_mime_type(m);
        }
        Ok(Built::Template(t))
    } else {
        let uri_owned = uri.to_owned();
        let mut r = Resource::new(uri, name, move || read(uri_owned.clone(), Arguments::new()));
        if let Some(d) = description {
            r = r.with_description(d);
        }
        if let Some(m) = mime_type {
            r = r.with_mime_type(m);
        }
        Ok(Built::Resource(r))
    }
}

impl Catalog {
    /// A catalog of every `#[prompt]` and `#[resource]` fn linked into the
    /// program (as `ToolRegistry::global()` holds every `#[tool]`).
    ///
    /// # Errors
    /// A message when a declared resource template does not parse (the
    /// macro checks templates at compile time, so only a hand-written
    /// declaration can fail).
    pub fn declared() -> Result<Self, String> {
        let catalog = Self::new();
        for declared in inventory::iter::<DeclaredPrompt> {
            catalog.add_prompt((declared.build)());
        }
        for declared in inventory::iter::<DeclaredResource> {
            match (declared.build)()? {
                Built::Resource(r) => catalog.add_resource(r),
                Built::Template(t) => catalog.add_template(t),
            }
        }
        Ok(catalog)
    }
}
