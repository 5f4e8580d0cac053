//! The `#[tool]` attribute macro.
//!
//! **Depend on `tool-core`, not on this crate.** `tool-core` re-exports the
//! macro as `tool_core::tool` and holds the runtime the generated code calls
//! (through its hidden `tool_core::__private` module); the two crates are
//! released together and pinned to each other's exact version. The usage
//! guide and a runnable example are in `tool-core`'s crate docs.
//!
//! # What `#[tool]` accepts
//!
//! On a free `fn` or `async fn`, with a doc comment (the description):
//!
//! ```text
//! #[tool(
//!     name = "web_search",                  // default: the fn name
//!     kind = "network",                     // read | write | exec | network | ask | other (default)
//!     read_only, destructive, idempotent, open_world, concurrency_safe, strict,
//!     requires_confirmation,
//!     editable_params = ["query"],          // model-visible parameters a person may edit
//!     hidden_params = ["uid"],              // filled from the context, never shown to the model
//!     inject_params(tags(mode = "merge", key = "search_config.default_tags")),
//!     url_patterns = ["*.google.com", "https://github.com/**/issues"],
//!     display(zh(name = "搜索", params(query = "关键词")), en(name = "Search")),
//!     timeout = "30s",                      // ms, s, m, h
//!     crate = "my_tools",                   // path to tool_core when it is renamed
//! )]
//! ```
//!
//! Parameters take `///` doc comments and `#[arg(description = "...",
//! default = EXPR, default, rename = "...")]`. `Option<T>` parameters and
//! parameters with a default are optional. `&ToolContext`, `ToolContext`,
//! `Option<&ToolContext>` and `State<T>` parameters are filled by the
//! framework and never shown to the model.
//!
//! # Diagnostics
//!
//! Every mistake in one item is reported in one compile, at the token that is
//! wrong (an unknown key gets a "did you mean"), and the fn itself is still
//! emitted so the rest of the crate keeps compiling. Type requirements
//! (parameters must be `Deserialize + JsonSchema`, a `Result`'s error must be
//! `Display`, `merge` needs a collection) are checked by assertions spanned at
//! the parameter, so rustc underlines it.
//!
//! # Dependencies and why
//!
//! Only `syn`, `quote` and `proc-macro2`, the standard proc-macro toolkit. The
//! attribute grammar (nested lists such as `inject_params(x(mode = ..))`,
//! flags that may take `= true`, `#[arg]` on parameters, per-key "did you mean")
//! is small and specific enough that a hand-written parser over `syn::Meta` is
//! shorter than configuring `darling` for it, and it keeps the error texts and
//! spans fully under our control.
//!
//! Layout: `attr` parses, `ast` models the fn, `check` holds one fn per rule,
//! `expand` emits code; this file only wires them together.

mod ast;
mod attr;
mod check;
mod docs;
mod errors;
mod expand;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{ToTokens, quote};
use syn::Item;

use crate::ast::ToolFn;
use crate::errors::Errors;

/// Turns a free `fn` or `async fn` into a tool registered with `tool_core`.
///
/// Use it as `tool_core::tool`; see the crate docs of `tool-core` for a guide
/// and of this crate for the list of options.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool_impl(args.into(), &item.into()).into()
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
