//! The `#[tool]` attribute macro, and tool-mcp's `#[prompt]` and
//! `#[resource]` (re-exported as `tool_mcp::{prompt, resource}`).
//!
//! **Depend on `tool-core`, not on this crate.** `tool-core` re-exports the
//! macro as `tool_core::tool` and holds the runtime the generated code calls
//! (through its hidden `tool_core::__private` module); the two crates are
//! released together and pinned to each other's exact version. The reference
//! of every option is on [`macro@tool`]; `tool-core`'s crate docs hold a
//! runnable quick start, and `tests/ui/pass/` in the repository compiles and
//! runs every form shown here.
//!
//! # Diagnostics
//!
//! Every mistake in one item is reported in one compile, at the token that is
//! wrong (an unknown key gets a "did you mean"), and the fn itself is still
//! emitted so the rest of the crate keeps compiling. Requirements on types
//! (parameters must be `Deserialize + JsonSchema`, a `Result`'s error must be
//! `Display`, `merge` needs a collection) are checked by assertions spanned at
//! the parameter, so rustc underlines the parameter, once. `tests/ui/fail/`
//! holds one case per diagnostic.
//!
//! # Dependencies and why
//!
//! - `syn`, `quote`, `proc-macro2`: the standard proc-macro toolkit.
//! - `darling`: maps the keys of `#[tool(...)]`, `#[arg(...)]` and the nested
//!   `inject_params(...)` / `display(...)` lists to typed fields
//!   (`#[derive(FromMeta)]`), as the project's design asks. Our own value
//!   parsers (`#[darling(with = ...)]`) keep each message saying what to
//!   write, and a key pass in front of darling keeps an unknown key at the
//!   key alone with a "did you mean" and a repeated key as "duplicate `key`"
//!   at the key (darling spans the whole item and words these
//!   "Unknown field: ..."); each item is handed to darling on its own, so one
//!   bad value never hides the errors of its neighbours.
//! - `tool-rules`: the rules the runtime applies too (tool and parameter
//!   names, tags, the URL-pattern grammar, "did you mean" on `strsim`) and
//!   the one declaration of the flags, `ToolFlags`, so the compile-time
//!   check and the run-time check cannot drift apart.
//!
//! Layout: `attr` parses the attributes, `ast` models the fn, `check` holds one
//! fn per rule, `expand` emits code; this file only wires them together.

mod ast;
mod attr;
mod catalog;
mod check;
mod docs;
mod errors;
mod expand;
mod toolset;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{ToTokens, quote};
use syn::Item;

use crate::ast::ToolFn;
use crate::errors::Errors;

/// Turns a free `fn` or `async fn` into a tool: its doc comment becomes the
/// description, its parameters a JSON Schema, and it registers itself in
/// `tool_core::ToolRegistry::global()`. The fn stays an ordinary fn that Rust
/// code can call as before.
///
/// ```ignore
/// use tool_core::{tool, State, ToolContext};
///
/// /// Search the user's notes.
/// ///
/// /// # Arguments
/// /// * `query` - What to look for.
/// #[tool(kind = "read", read_only, hidden_params = ["uid"], timeout = "5s")]
/// async fn search_notes(
///     query: String,
///     /// How many notes to return.
///     #[arg(default = 10)]
///     limit: usize,
///     uid: String,         // hidden: from the context value `uid`
///     ctx: &ToolContext,   // hidden: the call's context
///     db: State<Db>,       // hidden: typed application state
/// ) -> Result<Vec<Note>, DbError> {
///     db.search(&uid, &query, limit).await
/// }
/// ```
///
/// Sync fns run on tokio's blocking pool; async fns run on the caller's runtime.
/// Generic fns, `impl Trait` parameters, pattern parameters and
/// `unsafe`/`extern` fns are refused; a method (`self`) is refused unless its
/// impl block carries [`macro@toolset`].
///
/// # Description
///
/// The fn's doc comment, required and not blank. `#[doc = include_str!("x.md")]`
/// works (checked for blankness at compile time). The runtime reads the
/// `# Arguments` / `Args:` section for parameter descriptions and `# Examples`
/// for example arguments. An entry of those sections that names no parameter
/// of the fn (by Rust or renamed name; hidden, injected and context ones
/// count) is a compile error at its doc line, with a did-you-mean: the rename
/// drift caught at compile time (not checked for `include_str!` docs or when
/// a parameter is `#[arg(flatten)]`).
///
/// # Options
///
/// | option | meaning |
/// |---|---|
/// | `name = "web_search"` | tool name; default the fn name (`r#type` → `type`); must match `^[a-zA-Z0-9_-]{1,64}$` |
/// | `kind = "read"` | `read`, `write`, `exec`, `network`, `ask` or `other` (default) |
/// | `read_only`, `destructive`, `idempotent`, `open_world`, `concurrency_safe`, `strict`, `requires_confirmation` | flags, `false` unless given; `flag = true/false` also works |
/// | `hidden_params = ["uid"]` | parameters (Rust names) never shown to the model: filled from the context value of the same name, then the inject rule, then the default |
/// | `editable_params = ["body"]` | model-visible parameters a person may edit when confirming |
/// | `inject_params(tags(mode = "merge", key = "cfg.tags"))` | fill a parameter from a dotted context path; `mode = "default"` (the default) fills when the model sent nothing, `"merge"` combines lists/maps |
/// | `url_patterns = ["*.google.com", "https://github.com/**/issues"]` | pages the tool is offered on |
/// | `tags = ["fs", "search"]` | labels for selecting tools and for tool search; each matches `^[a-z0-9][a-z0-9_-]{0,31}$`, no repeats |
/// | `display(zh(name = "搜索", params(query = "关键词")), en(name = "Search"))` | localised names; write `zh_Hans` for `zh-Hans` |
/// | `timeout = "30s"` | per-call timeout: a positive number and `ms`, `s`, `m` or `h` |
/// | `task_support = "optional"` | whether a call may run as a task the caller polls (MCP tasks extension): `forbidden` (default), `optional`, `required` (`tool_core::TaskSupport`) |
/// | `crate = "my_tools"` | path of `tool_core` when the crate is renamed or re-exported |
///
/// # Parameters
///
/// A parameter is a plain `name: Type` with an owned type that implements
/// `serde::Deserialize` and `schemars::JsonSchema`. `Option<T>` is optional
/// (absent → `None`); everything else is required unless it has a default.
/// Per parameter:
///
/// - a `///` doc comment: its description;
/// - `#[arg(description = "...")]`: its description (wins over the doc comment);
/// - `#[arg(default = EXPR)]`: optional, absent → `EXPR`, which also shows as the
///   schema's `default` (the type must then be `Serialize`);
/// - `#[arg(default)]`: optional, absent → `Default::default()`;
/// - `#[arg(rename = "q")]`: the name the model sees (`^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$`);
/// - `#[arg(flatten)]`: the parameter's struct (`Deserialize + JsonSchema`)
///   is a whole-argument struct: its fields are the tool's top-level
///   parameters at the parameter's place, named, described (field doc
///   comments, else the fn doc's `# Arguments`) and made optional by serde and
///   schemars. It takes no other `#[arg]` key and no doc comment, is not
///   `Option<T>`, and cannot be hidden or injected; a tool may flatten
///   several. Field names may appear in `editable_params` and
///   `display(params(..))`. The macro cannot see the fields, so a field
///   named like another parameter or field is refused when the tool is
///   built (`tool_core::RegistryError::ParameterCollision`).
///
/// Parameters whose type implements `tool_core::FromToolContext` are filled
/// by the framework and never shown to the model: `&ToolContext`,
/// `ToolContext`, `Option<&ToolContext>`, `State<T>` and `CancellationToken`
/// are recognised by their type's last path segment; any other (an alias such
/// as `type Ctx = ToolContext;`, a type of your own) is marked `#[context]`.
/// Each is checked against the trait at the parameter, so a look-alike such
/// as axum's `State<T>` fails to compile there.
///
/// # Return types
///
/// `String`, `&'static str`, `Cow<str>`, `()` and `ToolResult` are used as they
/// are; any other `Serialize` type becomes its compact JSON text (with the value
/// in `metadata["structured"]`). `Result<T, E>` of any of these works with
/// `E: Display`: an `Err` becomes a failed result with the error's text.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool_impl(args.into(), &item.into()).into()
}

/// Turns the `#[tool]` methods of an `impl` block into tools bound to an
/// instance, and implements `tool_core::Toolset` for the type.
///
/// ```ignore
/// use std::sync::{Arc, Mutex};
/// use tool_core::{toolset, ToolRegistry};
///
/// struct Notes { notes: Mutex<Vec<String>> }
///
/// #[toolset]
/// impl Notes {
///     /// Add a note.
///     #[tool(kind = "write")]
///     fn add_note(&self, text: String) -> String {
///         self.notes.lock().unwrap().push(text);
///         "added".into()
///     }
///
///     /// List the notes.
///     #[tool(read_only)]
///     async fn list_notes(self: Arc<Self>) -> Vec<String> {
///         self.notes.lock().unwrap().clone()
///     }
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.add_toolset(Arc::new(Notes { notes: Mutex::default() }))?;
/// ```
///
/// Methods take `&self` or `self: Arc<Self>`, sync or async, and accept every
/// option and parameter form of a free `#[tool]` fn. Methods without
/// `#[tool]` stay ordinary methods. Generic impl blocks work
/// (`impl<S: Store + Send + Sync + 'static> Notes<S>`); the type must be
/// `Send + Sync + 'static` for `Toolset` to be implemented. Refused, at the
/// token that is wrong: `&mut self` and `self` by value, a `#[tool]` without
/// `self`, generic methods, and two tools of one impl with the same name.
///
/// The tools are **not** in `ToolRegistry::global()`: they need an instance,
/// so `Toolset::tools(Arc<Self>)` builds them and
/// `ToolRegistry::add_toolset(Arc<T>)` registers them; two instances of one
/// toolset collide by name like any two tools.
#[proc_macro_attribute]
pub fn toolset(args: TokenStream, item: TokenStream) -> TokenStream {
    toolset::toolset_impl(&args.into(), &item.into()).into()
}

/// Turns a free `fn` or `async fn` into an MCP prompt of
/// `tool_mcp::Catalog::declared()`: the doc comment (required) is the
/// description, its `# Arguments` section the arguments' descriptions, and
/// each parameter an argument: `String` required, `Option<String>`
/// optional (MCP prompt arguments are strings). The fn returns
/// `Vec<PromptMessage>`, one `PromptMessage` or a `String` (one user
/// message), or a `Result` of one of these with a `Display` error. The fn
/// stays an ordinary fn. Re-exported as `tool_mcp::prompt`.
///
/// ```ignore
/// use tool_mcp::prompt;
///
/// /// Review a piece of code.
/// ///
/// /// # Arguments
/// /// * `code` - The code to review.
/// /// * `focus` - What to look at first.
/// #[prompt(title = "Code review")]
/// fn review(code: String, focus: Option<String>) -> String {
///     format!("Review this code, focusing on {}:\n{code}", focus.as_deref().unwrap_or("bugs"))
/// }
/// ```
///
/// Options: `name = "..."` (default: the fn's name), `title = "..."`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    catalog::catalog_impl(catalog::Kind::Prompt, args.into(), &item.into()).into()
}

/// Turns a free `fn` or `async fn` into an MCP resource of
/// `tool_mcp::Catalog::declared()`: `#[resource("notes://today")]` for a
/// fixed URI, `#[resource("notes://{day}")]` for a resource template
/// (RFC 6570 `{name}` / `{+name}`) whose variables are the fn's parameters
/// (each a `String`; a variable without a parameter, or a parameter that is
/// no variable, is a compile error). The doc comment is the description.
/// The fn returns `String` (text), `Vec<u8>` (bytes, sent base64) or
/// `tool_mcp::ResourceBody`, or a `Result` of one with a `Display` error.
/// Re-exported as `tool_mcp::resource`.
///
/// ```ignore
/// use tool_mcp::resource;
///
/// /// A day's notes.
/// #[resource("notes://{day}", mime_type = "text/markdown")]
/// async fn notes(day: String) -> Result<String, std::io::Error> {
///     tokio::fs::read_to_string(format!("notes/{day}.md")).await
/// }
/// ```
///
/// Options after the URI: `name = "..."` (default: the fn's name),
/// `title = "..."`, `mime_type = "..."`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    catalog::catalog_impl(catalog::Kind::Resource, args.into(), &item.into()).into()
}

/// parse → check → expand; on any error, the user's fn and every error.
fn tool_impl(args: TokenStream2, item: &TokenStream2) -> TokenStream2 {
    let func = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(func)) => func,
        Ok(other) => return not_a_fn(&other, item),
        Err(e) => {
            let error = e.to_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    let args = attr::parse_tool_args(args, &mut errors);
    let tool = ToolFn::from_item(func, args, &mut errors);
    check::check(&tool, &mut errors);
    if errors.is_empty() {
        expand::expand(&tool)
    } else {
        fallback(&tool, &errors)
    }
}

/// The user's fn (without our parameter attributes, which rustc would reject)
/// beside the errors, so callers of the fn keep compiling and the user sees
/// only our messages.
fn fallback(tool: &ToolFn, errors: &Errors) -> TokenStream2 {
    let func = &tool.func;
    let errors = errors.to_compile_errors();
    quote! {
        #[allow(dead_code)]
        #func
        #errors
    }
}

/// The error for an item that is not a fn, spanned at its keyword.
fn not_a_fn(item: &Item, tokens: &TokenStream2) -> TokenStream2 {
    let keyword: TokenStream2 = match item {
        Item::Struct(i) => i.struct_token.into_token_stream(),
        Item::Enum(i) => i.enum_token.into_token_stream(),
        Item::Union(i) => i.union_token.into_token_stream(),
        Item::Trait(i) => i.trait_token.into_token_stream(),
        Item::Impl(i) => i.impl_token.into_token_stream(),
        Item::Mod(i) => i.mod_token.into_token_stream(),
        Item::Const(i) => i.const_token.into_token_stream(),
        Item::Static(i) => i.static_token.into_token_stream(),
        Item::Type(i) => i.type_token.into_token_stream(),
        Item::Use(i) => i.use_token.into_token_stream(),
        other => other.into_token_stream(),
    };
    let error = syn::Error::new_spanned(
        keyword,
        "#[tool] goes on a free `fn` or `async fn`: the fn becomes the tool, its doc comment the description",
    )
    .to_compile_error();
    quote!(#error #tokens)
}
