//! `#[prompt]` and `#[resource("uri")]`: a fn as an MCP prompt or resource
//! (tool-mcp's `Catalog::declared`). Parse the options, check the fn, emit
//! the fn unchanged plus an `inventory` entry that builds the prompt or
//! resource through `::tool_mcp::__private`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Item, ItemFn, LitStr, Pat, Token, Type};

use crate::docs::Doc;
use crate::errors::Errors;

/// Which macro.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Prompt,
    Resource,
}

impl Kind {
    fn attr(self) -> &'static str {
        match self {
            Self::Prompt => "#[prompt]",
            Self::Resource => "#[resource]",
        }
    }

    fn keys(self) -> &'static [&'static str] {
        match self {
            Self::Prompt => &["name", "title"],
            Self::Resource => &["name", "title", "mime_type"],
        }
    }
}

/// The options: the URI (resources), then `key = "value"` pairs.
#[derive(Default)]
struct Options {
    uri: Option<LitStr>,
    name: Option<LitStr>,
    title: Option<LitStr>,
    mime_type: Option<LitStr>,
}

fn parse_options(kind: Kind, args: TokenStream, errors: &mut Errors) -> Options {
    let mut options = Options::default();
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        if input.peek(LitStr) {
            let uri: LitStr = input.parse()?;
            if kind == Kind::Prompt {
                errors.spanned(
                    &uri,
                    "#[prompt] takes no URI: write `#[prompt]` or `#[prompt(name = \"...\")]`",
                );
            }
            options.uri = Some(uri);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: LitStr = input.parse()?;
            let slot = match key.to_string().as_str() {
                "name" => &mut options.name,
                "title" => &mut options.title,
                "mime_type" if kind == Kind::Resource => &mut options.mime_type,
                other => {
                    errors.spanned(
                        &key,
                        format!(
                            "unknown {} option `{other}`; the options are: {}",
                            kind.attr(),
                            kind.keys().join(", ")
                        ),
                    );
                    if !input.is_empty() {
                        input.parse::<Token![,]>()?;
                    }
                    continue;
                }
            };
            if slot.is_some() {
                errors.spanned(&key, format!("duplicate `{key}`"));
            }
            *slot = Some(value);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(args) {
        errors.push(e);
    }
    if kind == Kind::Resource && options.uri.is_none() {
        errors.at(
            Span::call_site(),
            "#[resource] needs its URI first: `#[resource(\"notes://today\")]`, or a template `#[resource(\"notes://{day}\")]`",
        );
    }
    options
}

/// One parameter: its name and type.
struct Param {
    ident: Ident,
    ty: Type,
}

fn params(func: &ItemFn, kind: Kind, errors: &mut Errors) -> Vec<Param> {
    let mut out = Vec::new();
    for input in &func.sig.inputs {
        match input {
            FnArg::Receiver(r) => errors.spanned(
                r,
                format!("{} goes on a free fn, not a method", kind.attr()),
            ),
            FnArg::Typed(t) => match &*t.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => out.push(Param {
                    ident: p.ident.clone(),
                    ty: (*t.ty).clone(),
                }),
                other => errors.spanned(
                    other,
                    format!("{} parameters are plain `name: Type`", kind.attr()),
                ),
            },
        }
    }
    out
}

/// The variable names of a URI template (`{name}` / `{+name}`).
fn template_variables(uri: &str) -> Vec<String> {
    let mut vars = Vec::new();
    let mut rest = uri;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let inner = &rest[start + 1..start + len];
        vars.push(inner.trim_start_matches('+').to_owned());
        rest = &rest[start + len + 1..];
    }
    vars
}

/// The checks of one fn; each opens with its rule.
fn check(
    func: &ItemFn,
    kind: Kind,
    options: &Options,
    params: &[Param],
    doc: &Doc,
    errors: &mut Errors,
) {
    // A generic or unsafe fn has no single fn pointer to register.
    if !func.sig.generics.params.is_empty() {
        errors.spanned(
            &func.sig.generics,
            format!("{} fns cannot be generic", kind.attr()),
        );
    }
    if let Some(u) = &func.sig.unsafety {
        errors.spanned(u, format!("{} fns cannot be `unsafe`", kind.attr()));
    }
    // Clients show the description in their prompt and resource lists.
    if kind == Kind::Prompt && (doc.is_missing() || doc.is_known_blank()) {
        errors.spanned(
            &func.sig.ident,
            "#[prompt] needs a doc comment: it is the prompt's description clients show",
        );
    }
    if let Some(uri) = &options.uri {
        // The runtime parses the same template; checking here turns a
        // typo into a compile error rather than a missing resource.
        let text = uri.value();
        if text.matches('{').count() != text.matches('}').count() {
            errors.spanned(uri, "unbalanced `{` `}` in the URI template");
            return;
        }
        let vars = template_variables(&text);
        for var in &vars {
            if var.is_empty() || !var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                errors.spanned(
                    uri,
                    format!("`{{{var}}}` is not a supported template variable: write `{{name}}` or `{{+name}}` (ASCII letters, digits, `_`)"),
                );
            } else if !params.iter().any(|p| p.ident == var.as_str()) {
                errors.spanned(
                    uri,
                    format!("the URI template's variable `{var}` has no parameter: add `{var}: String` to the fn"),
                );
            }
        }
        for p in params {
            if !vars.iter().any(|v| p.ident == v.as_str()) {
                errors.spanned(
                    &p.ident,
                    format!(
                        "parameter `{}` is not a variable of the URI template `{text}`: a resource fn's parameters are the template's variables",
                        p.ident
                    ),
                );
            }
        }
    }
}

/// The entry point of both macros.
pub(crate) fn catalog_impl(kind: Kind, args: TokenStream, item: &TokenStream) -> TokenStream {
    let func = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(func)) => func,
        Ok(other) => {
            let error = syn::Error::new(
                other.span(),
                format!("{} goes on a free `fn` or `async fn`", kind.attr()),
            )
            .to_compile_error();
            return quote!(#error #item);
        }
        Err(e) => {
            let error = e.to_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = Errors::default();
    let options = parse_options(kind, args, &mut errors);
    let params = params(&func, kind, &mut errors);
    let doc = Doc::from_attrs(&func.attrs);
    check(&func, kind, &options, &params, &doc, &mut errors);
    if !errors.is_empty() {
        let errors = errors.to_compile_errors();
        return quote! {
            #[allow(dead_code)]
            #func
            #errors
        };
    }
    expand(kind, &func, &options, &params, &doc)
}

fn expand(
    kind: Kind,
    func: &ItemFn,
    options: &Options,
    params: &[Param],
    doc: &Doc,
) -> TokenStream {
    let fn_ident = &func.sig.ident;
    let span = fn_ident.span();
    let fn_name = fn_ident.to_string();
    let fn_name = fn_name.strip_prefix("r#").unwrap_or(&fn_name);
    let name = options
        .name
        .clone()
        .unwrap_or_else(|| LitStr::new(fn_name, span));
    let doc = doc.to_str_expr(span);
    let p = quote!(::tool_mcp::__private);
    let names: Vec<String> = params.iter().map(|p| p.ident.to_string()).collect();
    let types: Vec<&Type> = params.iter().map(|p| &p.ty).collect();
    // Values under generated names: a parameter named like the fn must
    // not shadow the fn in the call below.
    let idents: Vec<Ident> = (0..params.len())
        .map(|i| format_ident!("__arg_{}", i))
        .collect();
    // Each type checked at its parameter, so rustc underlines that one.
    let reads = params.iter().zip(&idents).map(|(param, ident)| {
        let (ty, n) = (&param.ty, param.ident.to_string());
        quote::quote_spanned!(ty.span()=> let #ident: #ty = #p::arg::<#ty>(&__args, #n);)
    });
    let call = if func.sig.asyncness.is_some() {
        quote!(#fn_ident(#(#idents),*).await)
    } else {
        quote!(#fn_ident(#(#idents),*))
    };
    let render = format_ident!("__{}_{}_render", kind_word(kind), fn_name);
    let build = format_ident!("__{}_{}_build", kind_word(kind), fn_name);
    let title = options.title.as_ref().map(|t| quote!(.with_title(#t)));
    let body = match kind {
        Kind::Prompt => quote! {
            #[allow(non_snake_case)]
            fn #render(__args: ::tool_mcp::catalog::Arguments)
                -> #p::BoxFuture<::core::result::Result<::std::vec::Vec<::tool_mcp::rmcp::model::PromptMessage>, ::tool_mcp::catalog::CatalogError>>
            {
                ::std::boxed::Box::pin(async move {
                    #(#reads)*
                    #p::IntoPromptMessages::into_messages(#call)
                })
            }
            fn #build() -> ::tool_mcp::catalog::Prompt {
                #p::prompt(#name, #doc, &[#((#names, <#types as #p::PromptArg>::REQUIRED)),*], #render) #title
            }
            #p::inventory::submit! { #p::DeclaredPrompt { build: #build } }
        },
        Kind::Resource => {
            let uri = options.uri.clone().unwrap_or_else(|| LitStr::new("", span));
            let mime = match &options.mime_type {
                Some(m) => quote!(::core::option::Option::Some(#m)),
                None => quote!(::core::option::Option::None),
            };
            let title = options.title.as_ref().map(|t| {
                quote! {
                    let __built = match __built {
                        #p::Built::Resource(r) => #p::Built::Resource(r.with_title(#t)),
                        #p::Built::Template(t) => #p::Built::Template(t.with_title(#t)),
                    };
                }
            });
            quote! {
                #[allow(non_snake_case)]
                fn #render(__uri: ::std::string::String, __args: ::tool_mcp::catalog::Arguments)
                    -> #p::BoxFuture<::core::result::Result<::tool_mcp::catalog::ResourceBody, ::tool_mcp::catalog::CatalogError>>
                {
                    let _ = __uri;
                    ::std::boxed::Box::pin(async move {
                        #(#reads)*
                        #p::IntoResourceBody::into_body(#call)
                    })
                }
                fn #build() -> ::core::result::Result<#p::Built, ::std::string::String> {
                    let __built = #p::resource(#uri, #name, #doc, #mime, #render)?;
                    #title
                    ::core::result::Result::Ok(__built)
                }
                #p::inventory::submit! { #p::DeclaredResource { build: #build } }
            }
        }
    };
    quote! {
        #[allow(
            clippy::needless_pass_by_value,
            reason = "prompt arguments and template variables arrive as owned strings, so taking them by value is the contract"
        )]
        #func
        const _: () = {
            #body
        };
    }
}

fn kind_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Prompt => "prompt",
        Kind::Resource => "resource",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `compile_error!` messages of an expansion.
    #[allow(
        clippy::needless_pass_by_value,
        reason = "test helper taking `quote!` output"
    )]
    fn errors(kind: Kind, args: TokenStream, item: TokenStream) -> Vec<String> {
        let out = catalog_impl(kind, args, &item).to_string();
        out.split("compile_error !")
            .skip(1)
            .filter_map(|rest| rest.split('"').nth(1).map(str::to_owned))
            .collect()
    }

    #[test]
    fn a_good_prompt_and_resource_expand_to_an_inventory_entry() {
        let out = catalog_impl(
            Kind::Prompt,
            quote!(title = "Greeting"),
            &quote! {
                /// Greets.
                fn greet(name: String, tone: Option<String>) -> String { name }
            },
        )
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("DeclaredPrompt"), "{out}");
        assert!(out.contains("\"greet\""), "{out}");
        let out = catalog_impl(
            Kind::Resource,
            quote!("notes://{day}/{+rest}", mime_type = "text/plain"),
            &quote! {
                /// Notes.
                async fn notes(day: String, rest: String) -> String { day }
            },
        )
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("DeclaredResource"), "{out}");
    }

    #[test]
    fn each_mistake_is_reported_with_what_to_write() {
        let cases: Vec<(Kind, TokenStream, TokenStream, &str)> = vec![
            (
                Kind::Prompt,
                quote!(),
                quote!(
                    fn undocumented() -> String {
                        String::new()
                    }
                ),
                "#[prompt] needs a doc comment",
            ),
            (
                Kind::Prompt,
                quote!(colour = "red"),
                quote!(
                    /// D.
                    fn p() -> String {
                        String::new()
                    }
                ),
                "unknown #[prompt] option `colour`; the options are: name, title",
            ),
            (
                Kind::Prompt,
                quote!(name = "a", name = "b"),
                quote!(
                    /// D.
                    fn p() -> String {
                        String::new()
                    }
                ),
                "duplicate `name`",
            ),
            (
                Kind::Resource,
                quote!(),
                quote!(
                    /// D.
                    fn r() -> String {
                        String::new()
                    }
                ),
                "#[resource] needs its URI first",
            ),
            (
                Kind::Resource,
                quote!("notes://{day}"),
                quote!(
                    /// D.
                    fn r() -> String {
                        String::new()
                    }
                ),
                "the URI template's variable `day` has no parameter: add `day: String` to the fn",
            ),
            (
                Kind::Resource,
                quote!("notes://today"),
                quote!(
                    /// D.
                    fn r(day: String) -> String {
                        day
                    }
                ),
                "parameter `day` is not a variable of the URI template `notes://today`",
            ),
            (
                Kind::Resource,
                quote!("notes://{?q}"),
                quote!(
                    /// D.
                    fn r(q: String) -> String {
                        q
                    }
                ),
                "`{?q}` is not a supported template variable",
            ),
            (
                Kind::Resource,
                quote!("notes://{day"),
                quote!(
                    /// D.
                    fn r(day: String) -> String {
                        day
                    }
                ),
                "unbalanced `{` `}` in the URI template",
            ),
            (
                Kind::Prompt,
                quote!(),
                quote!(
                    /// D.
                    fn g<T>(x: String) -> String {
                        x
                    }
                ),
                "#[prompt] fns cannot be generic",
            ),
            (
                Kind::Prompt,
                quote!(),
                quote!(
                    struct NotAFn;
                ),
                "#[prompt] goes on a free `fn` or `async fn`",
            ),
        ];
        for (kind, args, item, expected) in cases {
            let found = errors(kind, args, item);
            assert!(
                found.iter().any(|e| e.starts_with(expected)),
                "expected `{expected}`, got {found:?}"
            );
        }
    }

    #[test]
    fn the_users_fn_is_kept_beside_the_errors() {
        let out = catalog_impl(
            Kind::Prompt,
            quote!(),
            &quote!(
                fn kept() -> String {
                    String::new()
                }
            ),
        )
        .to_string();
        assert!(out.contains("fn kept"), "{out}");
    }
}
