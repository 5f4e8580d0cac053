//! Code generation for a checked [`ToolFn`].
//!
//! Beside the user's fn (unchanged but for our parameter attributes), one
//! anonymous `const _: () = { ... };` block holds everything generated:
//!
//! - the doc text, and an assertion that it is not blank when it comes from
//!   `include_str!` (the macro cannot read it);
//! - trait assertions spanned at each parameter's type (`assert_tool_param`,
//!   `assert_mergeable`) and at a `Result`'s error type (`assert_error_display`),
//!   so rustc underlines the offending parameter rather than the macro;
//! - a `&'static [StaticParam]` and an `inventory::submit!` of the
//!   `StaticTool`, holding only `&'static` data and fn pointers;
//! - the call shim, which extracts the arguments in declaration order, calls
//!   the fn (sync bodies on the blocking pool) and converts its return value.
//!
//! The shim reaches parameter types through small local traits with a
//! fallback impl ("autoref specialisation"): when a type lacks a bound, the
//! fallback is picked and the shim still compiles, so the only error the user
//! sees is the spanned assertion's, once. The fallback never runs: a build in
//! which it is picked has failed that assertion.
//!
//! Every path into the runtime goes through `<crate>::__private` (default
//! `::tool_core`), so users need no direct dependency on serde, schemars or
//! inventory.
//!
//! Why one file of this size: it is one concern, the code generated for one
//! tool fn (the toolset's wrapper is `toolset.rs`).

use proc_macro2::{Delimiter, Group, Ident, Spacing, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{LitStr, Type};

use crate::ast::{Description, Fill, Param, ParamKind, Role, Shape, ToolFn};
use crate::attr::{InjectMode, Kind};
use crate::check::{self, display_target, editable_target};
use tool_rules::ToolFlags;

/// The user's fn plus its registration.
pub(crate) fn expand(tool: &ToolFn) -> TokenStream {
    let e = Expander::new(tool);
    let func = &tool.func;
    let doc = e.expand_doc();
    let helpers = e.expand_helpers();
    let assertions = e.expand_assertions();
    let defaults = tool
        .params
        .iter()
        .filter_map(|param| e.expand_default_fn(param));
    let params_ident = e.ident("params");
    let params = tool.params.iter().map(|param| e.expand_param(param));
    let count = tool.params.len();
    let registration = e.expand_registration();
    let warnings = undocumented_warnings(tool);
    let p = &e.private;
    // A `#[cfg]` written after `#[tool]` reaches us on the fn; the registration
    // must come and go with the fn it calls.
    let cfgs: Vec<_> = func
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let warnings = if warnings.is_empty() {
        warnings
    } else {
        quote!(#(#cfgs)* const _: () = { #warnings };)
    };
    quote! {
        #warnings

        #[allow(
            clippy::needless_pass_by_value,
            reason = "#[tool] parameters are deserialized into owned values, so taking them by value is the contract"
        )]
        #func

        #(#cfgs)*
        #[doc(hidden)]
        #[allow(
            non_upper_case_globals,
            dead_code,
            deprecated,
            reason = "generated items: lowercase `__tool_<fn>_<what>` names, helpers a tool may not use, and the call of a tool fn that is itself deprecated"
        )]
        const _: () = {
            #doc
            #assertions
            #helpers
            #(#defaults)*
            static #params_ident: [#p::StaticParam; #count] = [#(#params),*];
            #registration
        };
    }
}

/// What the emitters share: the tool and the path to the runtime.
struct Expander<'a> {
    tool: &'a ToolFn,
    /// The receiver, for a `#[toolset]` method; `None` for a free fn.
    method: Option<Receiver>,
    /// `::tool_core` or the `crate = "..."` path.
    krate: TokenStream,
    /// `<krate>::__private`.
    private: TokenStream,
    /// The type parameters of a `#[toolset]` impl block (none for a free fn).
    impl_type_params: Vec<Ident>,
}

impl<'a> Expander<'a> {
    fn new(tool: &'a ToolFn) -> Self {
        let krate = match &tool.args.krate {
            Some(path) => path.to_token_stream(),
            None => quote!(::tool_core),
        };
        let private = quote!(#krate::__private);
        Self {
            tool,
            method: None,
            krate,
            private,
            impl_type_params: Vec::new(),
        }
    }

    /// Whether `ty` names a type parameter of the impl block (`W<T>`).
    fn mentions_impl_generics(&self, ty: &syn::Type) -> bool {
        fn walk(tokens: TokenStream, names: &[Ident]) -> bool {
            tokens.into_iter().any(|t| match t {
                TokenTree::Ident(i) => names.contains(&i),
                TokenTree::Group(g) => walk(g.stream(), names),
                _ => false,
            })
        }
        !self.impl_type_params.is_empty() && walk(ty.to_token_stream(), &self.impl_type_params)
    }

    /// `Self::` for a method's generated items (associated items of the
    /// impl), nothing for a free fn's (items of its `const _` block).
    fn owner(&self) -> TokenStream {
        match self.method {
            Some(_) => quote!(Self::),
            None => TokenStream::new(),
        }
    }

    /// The access-trait imports where a method's closures need them (a free
    /// fn has them once, at the top of its `const _` block).
    fn local_helpers(&self) -> TokenStream {
        match self.method {
            Some(_) => self.expand_helpers(),
            None => TokenStream::new(),
        }
    }

    /// `<krate>::__private` with every token at `span`: expressions built from
    /// it report their errors there (at a parameter's type, say) and not at
    /// the `#[tool]` attribute.
    fn private_at(&self, span: Span) -> TokenStream {
        respan(self.private.clone(), span)
    }

    /// `__tool_<fn>_<what>`.
    fn ident(&self, what: &str) -> Ident {
        format_ident!("__tool_{}_{}", self.tool.ident_base(), what)
    }

    fn fn_span(&self) -> Span {
        self.tool.func.sig.ident.span()
    }

    /// The doc text constant, and the blank check for text the macro cannot see.
    fn expand_doc(&self) -> TokenStream {
        let p = &self.private;
        let ident = self.ident("doc");
        let text = self.tool.doc.to_str_expr(self.fn_span());
        let blank_check = (!self.tool.doc.is_literal() && self.method.is_none()).then(|| {
            let message = format!(
                "tool `{}` needs a description, but its doc comment is blank",
                self.tool.name
            );
            quote_spanned! {self.fn_span()=>
                const _: () = ::core::assert!(!#p::doc_is_blank(#ident), #message);
            }
        });
        quote! {
            const #ident: &'static str = #text;
            #blank_check
        }
    }

    /// Trait assertions spanned at the types they are about: `const _`
    /// items for a free fn, calls of the (no-op) const fns inside `tools()`
    /// for a method, whose parameter types may name the impl's generics.
    fn expand_assertions(&self) -> TokenStream {
        let items = self.expand_assertion_items();
        if self.method.is_none() {
            return items;
        }
        let mut out = TokenStream::new();
        let mut tokens = items.into_iter().peekable();
        // Each item is `const _: () = CALL;`: keep `CALL;`.
        while let Some(token) = tokens.next() {
            if let TokenTree::Punct(eq) = &token
                && eq.as_char() == '='
            {
                for t in tokens.by_ref() {
                    let end = matches!(&t, TokenTree::Punct(p) if p.as_char() == ';');
                    out.extend([t]);
                    if end {
                        break;
                    }
                }
            }
        }
        out
    }

    fn expand_assertion_items(&self) -> TokenStream {
        let mut out = TokenStream::new();
        for param in &self.tool.params {
            let ty = &param.ty;
            let p = self.private_at(ty.span());
            if matches!(param.role(), Role::Visible | Role::Hidden | Role::Flattened) {
                out.extend(quote_spanned! {ty.span()=>
                    const _: () = #p::assert_tool_param::<#ty>();
                });
            } else {
                out.extend(quote_spanned! {ty.span()=>
                    const _: () = #p::assert_from_tool_context::<#ty>();
                });
            }
            if param
                .inject
                .as_ref()
                .is_some_and(|rule| rule.mode == InjectMode::Merge)
                && matches!(param.kind, ParamKind::Value)
            {
                out.extend(quote_spanned! {ty.span()=>
                    const _: () = #p::assert_mergeable::<#ty>();
                });
            }
        }
        if let Shape::Result { err: Some(err), .. } = &self.tool.output.shape {
            let p = self.private_at(err.span());
            out.extend(quote_spanned! {err.span()=>
                const _: () = #p::assert_error_display::<#err>();
            });
        }
        out
    }

    /// Imports of the `__private` traits through which the shim reaches parameter and error types.
    fn expand_helpers(&self) -> TokenStream {
        let p = &self.private;
        let has_values = self
            .tool
            .params
            .iter()
            .any(|param| matches!(param.kind, ParamKind::Value));
        let has_err = matches!(self.tool.output.shape, Shape::Result { err: Some(_), .. });
        let has_framework = self
            .tool
            .params
            .iter()
            .any(|param| !matches!(param.kind, ParamKind::Value));
        if !has_values && !has_err && !has_framework {
            return TokenStream::new();
        }
        let values = has_values.then(|| quote!(#p::ArgAccess as _, #p::ArgAccessFallback as _,));
        let framework =
            has_framework.then(|| quote!(#p::ExtractAccess as _, #p::ExtractAccessFallback as _,));
        let errors = has_err.then(|| quote!(#p::ErrAccess as _, #p::ErrAccessFallback as _,));
        quote! {
            #[allow(unused_imports, reason = "which access traits a tool uses depends on its signature")]
            use {#p::Wrap as __ToolWrap, #values #errors #framework};
        }
    }

    /// `fn __tool_<fn>_default_<param>() -> T { EXPR }`: the one place `EXPR`
    /// is type-checked, used by the shim and by the schema's `default`.
    fn expand_default_fn(&self, param: &Param) -> Option<TokenStream> {
        let Fill::DefaultExpr(expr) = &param.fill else {
            return None;
        };
        let ident = self.default_fn_ident(param);
        let ty = &param.ty;
        // A plain string literal is the text of a text parameter
        // (`#[arg(default = "reader")] name: String`): converted through
        // `StrDefault`, whose diagnostic says what to write for any other
        // type (issue 24, second review, finding 5).
        let value = if is_str_literal(expr) {
            let p = self.private_at(expr.span());
            quote_spanned!(expr.span()=> <#ty as #p::StrDefault>::from_str_default(#expr))
        } else {
            quote!(#expr)
        };
        // Through a typed binding, so that a default of the wrong type is
        // reported at the default with "expected due to this" under the
        // parameter's type, never as the "return type" of a function the
        // user did not write (issue 24, first hour item 6).
        Some(quote! {
            fn #ident() -> #ty {
                #[allow(clippy::let_and_return, reason = "points type errors at the parameter")]
                let __default: #ty = #value;
                __default
            }
        })
    }

    fn default_fn_ident(&self, param: &Param) -> Ident {
        self.ident(&format!("default_{}", param.rust_name))
    }

    /// One `StaticParam`.
    fn expand_param(&self, param: &Param) -> TokenStream {
        let p = &self.private;
        let ty = &param.ty;
        let name = &param.name;
        let rust_name = &param.rust_name;
        let rust_type = type_string(ty);
        let description = match &param.description {
            Some(Description::Attr(lit)) => some(lit.to_token_stream()),
            Some(Description::Doc(doc)) => some(doc.to_str_expr(param.ident.span())),
            None => none(),
        };
        let role = match param.role() {
            Role::Visible => quote!(#p::ParamRole::Visible),
            Role::Hidden => quote!(#p::ParamRole::Hidden),
            Role::Context => quote!(#p::ParamRole::Context),
            Role::State => quote!(#p::ParamRole::State),
            Role::Flattened => quote!(#p::ParamRole::Flattened),
        };
        let optional = matches!(param.role(), Role::Visible | Role::Hidden) && param.is_optional();
        let helpers = self.local_helpers();
        let owner = self.owner();
        // A flattened struct's schema is its object schema itself (not a
        // `$ref`), whose properties the runtime lifts to the top level.
        let access = match param.role() {
            Role::Visible => Some(quote!(__schema)),
            Role::Flattened => Some(quote!(__flat_schema)),
            _ => None,
        };
        let schema = match access {
            Some(access) => {
                let span = ty.span();
                let p = self.private_at(span);
                some(quote_spanned! {span=>
                    |generator: &mut #p::schemars::SchemaGenerator| {
                        #helpers
                        (&__ToolWrap::<#ty>::NEW).#access(generator)
                    }
                })
            }
            None => none(),
        };
        // Written with the impl's generics: messages show the concrete type.
        let concrete_type = if self.mentions_impl_generics(ty) {
            some(quote!(|| ::core::any::type_name::<#ty>()))
        } else {
            none()
        };
        let default = match &param.fill {
            Fill::DefaultExpr(expr) => {
                let f = self.default_fn_ident(param);
                let p = self.private_at(expr.span());
                some(quote_spanned!(expr.span()=> || #p::default_json::<#ty>(&#owner #f())))
            }
            _ => none(),
        };
        let inject = match &param.inject {
            Some(rule) => {
                let mode = match rule.mode {
                    InjectMode::Default => quote!(#p::InjectMode::Default),
                    InjectMode::Merge => quote!(#p::InjectMode::Merge),
                };
                let key = &rule.key;
                some(quote!(#p::StaticInject { mode: #mode, key: #key }))
            }
            None => none(),
        };
        quote! {
            #p::StaticParam {
                name: #name,
                rust_name: #rust_name,
                rust_type: #rust_type,
                concrete_type: #concrete_type,
                description: #description,
                role: #role,
                optional: #optional,
                schema: #schema,
                default: #default,
                inject: #inject,
            }
        }
    }

    /// `inventory::submit!` of the `StaticTool`.
    fn expand_registration(&self) -> TokenStream {
        let p = &self.private;
        let params = self.ident("params");
        let def = self.expand_static_tool(&quote!(&#params));
        quote! {
            #p::inventory::submit! { #def }
        }
    }

    /// The `StaticTool` literal, with `params` as the parameters slice.
    fn expand_static_tool(&self, params: &TokenStream) -> TokenStream {
        let p = &self.private;
        let name = &self.tool.name;
        let doc = self.ident("doc");
        let owner = self.owner();
        let options = self.expand_options();
        let call = self.expand_call();
        let output_schema = self.expand_output_schema();
        let file = quote_spanned!(self.fn_span()=> ::core::file!());
        let line = quote_spanned!(self.fn_span()=> ::core::line!());
        let module_path = quote_spanned!(self.fn_span()=> ::core::module_path!());
        quote! {
            #p::StaticTool {
                name: #name,
                doc: #owner #doc,
                file: #file,
                line: #line,
                module_path: #module_path,
                params: #params,
                options: #options,
                call: #call,
                output_schema: #output_schema,
            }
        }
    }

    /// `Some(schema fn)` of the structured type a tool returns (through `Json`),
    /// `None` for text-like returns. Types without `JsonSchema` get no schema
    /// (the access trait's fallback), never an error.
    fn expand_output_schema(&self) -> TokenStream {
        let p = &self.private;
        let structured = match (&self.tool.output.shape, &self.tool.func.sig.output) {
            (Shape::Json, syn::ReturnType::Type(_, ty)) => Some((**ty).clone()),
            (
                Shape::Result {
                    ok_direct: false, ..
                },
                syn::ReturnType::Type(_, ty),
            ) => result_ok_type(ty),
            _ => None,
        };
        match structured {
            Some(ty) => quote! {
                ::core::option::Option::Some(|generator: &mut #p::schemars::SchemaGenerator| {
                    use #p::{OutputAccess as _, OutputAccessFallback as _};
                    (&#p::Wrap::<#ty>::NEW).__output_schema(generator)
                })
            },
            None => quote!(::core::option::Option::None),
        }
    }

    /// The `StaticOptions`.
    fn expand_options(&self) -> TokenStream {
        let p = &self.private;
        let krate = &self.krate;
        let args = &self.tool.args;
        let kind = format_ident!("{}", args.kind.unwrap_or(Kind::Other).variant());
        let flags = expand_flags(&args.flags.0, p);
        // A name that is no parameter of the fn can only be a field of a
        // flattened struct (`check_editable_params`); it goes through as
        // written and is checked against the schema at registration.
        let editable = args.editable_params.iter().map(|lit| {
            editable_target(self.tool, lit).map_or_else(|| lit.value(), |param| param.name.clone())
        });
        let url_patterns = &args.url_patterns;
        let tags = &args.tags;
        let display = args.display.iter().map(|lang| {
            let tag = lang.lang.to_string().replace('_', "-");
            let name = match &lang.name {
                Some(lit) => some(lit.to_token_stream()),
                None => none(),
            };
            let params = lang.params.iter().map(|(ident, label): &(Ident, LitStr)| {
                // As for `editable` above: an unknown name is a field.
                let name = display_target(self.tool, ident)
                    .map_or_else(|| ident.unraw().to_string(), |param| param.name.clone());
                quote!((#name, #label))
            });
            quote! {
                #p::StaticDisplay { lang: #tag, name: #name, params: &[#(#params),*] }
            }
        });
        let timeout = match args.timeout_ms {
            Some(ms) => some(quote!(#ms)),
            None => none(),
        };
        let task_support = format_ident!("{}", args.task_support.unwrap_or("Forbidden"));
        quote! {
            #p::StaticOptions {
                kind: #krate::__private::ToolKind::#kind,
                flags: #flags,
                tags: &[#(#tags),*],
                editable_params: &[#(#editable),*],
                url_patterns: &[#(#url_patterns),*],
                display: &[#(#display),*],
                timeout_ms: #timeout,
                task_support: #krate::__private::TaskSupport::#task_support,
            }
        }
    }

    /// The call shim: a non-capturing closure coerced to `fn(Invocation) -> BoxFuture<ToolResult>`.
    fn expand_call(&self) -> TokenStream {
        let p = &self.private;
        let extractions = self
            .tool
            .params
            .iter()
            .map(|param| self.expand_extraction(param));
        let args = self.tool.params.iter().map(|param| self.call_arg(param));
        let ident = &self.tool.func.sig.ident;
        let krate = &self.krate;
        let is_async = self.tool.func.sig.asyncness.is_some();
        let framework = self
            .tool
            .params
            .iter()
            .filter_map(|param| self.expand_framework_extraction(param, !is_async));
        let (callee, receiver, fetch) = match self.method {
            None => (quote!(#ident), TokenStream::new(), TokenStream::new()),
            Some(kind) => {
                let receiver = match kind {
                    Receiver::Ref => quote!(&*__self,),
                    Receiver::Arc => quote!(__self,),
                };
                let fetch = quote! {
                    let __self: ::std::sync::Arc<Self> = match __inv.receiver::<Self>() {
                        ::core::result::Result::Ok(receiver) => receiver,
                        ::core::result::Result::Err(error) => return error,
                    };
                };
                (quote!(Self::#ident), receiver, fetch)
            }
        };
        let call = if is_async {
            quote! {
                #(#framework)*
                let __out = #callee(#receiver #(#args),*).await;
            }
        } else {
            // Framework values are taken inside the blocking closure: a
            // `&ToolContext` borrows the context the closure owns.
            quote! {
                let __out = match #p::resume_blocking(move || -> ::core::result::Result<_, ::std::boxed::Box<#krate::ToolResult>> {
                    #(#framework)*
                    ::core::result::Result::Ok(#callee(#receiver #(#args),*))
                })
                .await
                {
                    ::core::result::Result::Ok(out) => out,
                    ::core::result::Result::Err(result) => return *result,
                };
            }
        };
        let convert = self.expand_conversion();
        let mutability = self
            .tool
            .params
            .iter()
            .any(|param| matches!(param.kind, ParamKind::Value))
            .then(|| quote!(mut));
        let helpers = self.local_helpers();
        quote! {
            |#mutability __inv: #p::Invocation| {
                #helpers
                ::std::boxed::Box::pin(async move {
                    #fetch
                    #(#extractions)*
                    let (__ctx, __notes) = match __inv.finish() {
                        ::core::result::Result::Ok(done) => done,
                        ::core::result::Result::Err(error) => return #p::into_result(error),
                    };
                    #call
                    let __result = #convert;
                    #p::complete(__notes, __result)
                }) as #p::BoxFuture<_>
            }
        }
    }

    /// `let __argN = ...;` for a parameter that takes a value out of the invocation.
    fn expand_extraction(&self, param: &Param) -> Option<TokenStream> {
        let var = arg_var(param);
        let idx = param.index;
        let span = param.ty.span();
        let p = self.private_at(span);
        match &param.kind {
            ParamKind::Context(_) | ParamKind::State => None,
            ParamKind::Value if param.is_flattened() => {
                let ty = &param.ty;
                Some(quote! {
                    let #var: #ty = match (&__ToolWrap::<#ty>::NEW).__flattened(&mut __inv, #idx) {
                        ::core::result::Result::Ok(value) => value,
                        ::core::result::Result::Err(error) => return #p::into_result(error),
                    };
                })
            }
            ParamKind::Value => {
                let ty = &param.ty;
                let (getter, fill) = match &param.fill {
                    Fill::Required => (quote!(__required), TokenStream::new()),
                    Fill::Option => (
                        quote!(__value),
                        quote!(.unwrap_or(::core::option::Option::None)),
                    ),
                    Fill::DefaultTrait(key) => (
                        quote!(__value),
                        quote_spanned!(key.span()=> .unwrap_or_default()),
                    ),
                    Fill::DefaultExpr(_) => {
                        let f = self.default_fn_ident(param);
                        let owner = self.owner();
                        (quote!(__value), quote!(.unwrap_or_else(#owner #f)))
                    }
                };
                Some(quote! {
                    let #var: #ty = match (&__ToolWrap::<#ty>::NEW).#getter(&mut __inv, #idx) {
                        ::core::result::Result::Ok(value) => value #fill,
                        ::core::result::Result::Err(error) => return #p::into_result(error),
                    };
                })
            }
        }
    }

    /// `let __argN: T = <T as FromToolContext>::from_tool_context(&__ctx)`
    /// (through the access trait) for a framework-filled parameter; on
    /// failure the call ends with the error, `Err(..)` inside the blocking
    /// closure of a sync fn.
    fn expand_framework_extraction(&self, param: &Param, in_closure: bool) -> Option<TokenStream> {
        if matches!(param.kind, ParamKind::Value) {
            return None;
        }
        let var = arg_var(param);
        let ty = &param.ty;
        let span = ty.span();
        let p = self.private_at(span);
        let tool = &self.tool.name;
        let name = &param.rust_name;
        let fail = quote!(#p::extract_failed(#tool, #name, error));
        let fail = if in_closure {
            quote!(::core::result::Result::Err(::std::boxed::Box::new(#fail)))
        } else {
            fail
        };
        Some(quote_spanned! {span=>
            let #var: #ty = match (&__ToolWrap::<#ty>::NEW).__extract(&__ctx) {
                ::core::result::Result::Ok(value) => value,
                ::core::result::Result::Err(error) => return #fail,
            };
        })
    }

    /// The argument expression passed to the user's fn for `param`.
    fn call_arg(&self, param: &Param) -> TokenStream {
        let _ = self;
        arg_var(param).into_token_stream()
    }

    /// `__out` → `ToolResult`, spanned at the return type.
    fn expand_conversion(&self) -> TokenStream {
        let span = self.tool.output.span;
        let p = self.private_at(span);
        let (ok_direct, err) = match &self.tool.output.shape {
            Shape::Direct => return quote_spanned!(span=> #p::into_result(__out)),
            Shape::Json => return quote_spanned!(span=> #p::into_result(#p::Json(__out))),
            Shape::Result { ok_direct, err } => (*ok_direct, err),
        };
        let ok = if ok_direct {
            quote_spanned!(span=> #p::into_result(__v))
        } else {
            quote_spanned!(span=> #p::into_result(#p::Json(__v)))
        };
        // The error through three autoref levels (`__private::ErrAccessKind`):
        // `E: Into<ToolError>` keeps its kind, a `Display`-only `E` is `failed`.
        // An unwritten error type (`io::Result<T>`) is taken from the value.
        let wrap = match err {
            Some(err) => {
                let err_p = self.private_at(err.span());
                quote_spanned!(err.span()=> &&#err_p::Wrap::<#err>::NEW)
            }
            None => quote_spanned!(span=> &&#p::error_wrap(&__e)),
        };
        quote! {
            match __out {
                ::core::result::Result::Ok(__v) => #ok,
                ::core::result::Result::Err(__e) => {
                    use #p::{ErrAccessKind as _, ErrAccess as _, ErrAccessFallback as _};
                    (#wrap).__error(__e)
                }
            }
        }
    }
}

/// The receiver of a `#[toolset]` method.
#[derive(Clone, Copy)]
pub(crate) enum Receiver {
    /// `&self`.
    Ref,
    /// `self: Arc<Self>`.
    Arc,
}

/// A `#[toolset]` impl block: the user's impl (our attributes removed), one
/// more impl of the same type holding each method's generated items, and the
/// `Toolset` impl whose `tools()` binds them to an instance. Nothing goes to
/// `inventory`: a method's tool needs an instance.
pub(crate) fn expand_toolset(imp: &syn::ItemImpl, tools: &[(ToolFn, Receiver)]) -> TokenStream {
    let krate = tools
        .iter()
        .find_map(|(tool, _)| tool.args.krate.as_ref())
        .map_or_else(|| quote!(::tool_core), ToTokens::to_token_stream);
    let p = quote!(#krate::__private);
    let mut generics = imp.generics.clone();
    generics
        .make_where_clause()
        .predicates
        .push(syn::parse_quote!(
            Self: ::core::marker::Send + ::core::marker::Sync + 'static
        ));
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let self_ty = &imp.self_ty;
    let mut items = Vec::new();
    let mut checks = Vec::new();
    let mut defs = Vec::new();
    for (tool, receiver) in tools {
        let mut e = Expander::new(tool);
        e.method = Some(*receiver);
        e.impl_type_params = imp
            .generics
            .type_params()
            .map(|t| t.ident.clone())
            .collect();
        let doc = e.expand_doc();
        let defaults = tool
            .params
            .iter()
            .filter_map(|param| e.expand_default_fn(param));
        let params = tool.params.iter().map(|param| e.expand_param(param));
        let def_ident = e.ident("def");
        let def = e.expand_static_tool(&quote!(&[#(#params),*]));
        items.push(quote! {
            #doc
            #(#defaults)*
            const #def_ident: #p::StaticTool = #def;
        });
        checks.push(e.expand_assertions());
        checks.push(undocumented_warnings(tool));
        if !tool.doc.is_literal() {
            let ident = e.ident("doc");
            let message = format!(
                "tool `{}` needs a description, but its doc comment is blank",
                tool.name
            );
            checks.push(quote_spanned! {e.fn_span()=>
                const { ::core::assert!(!#p::doc_is_blank(Self::#ident), #message) };
            });
        }
        defs.push(quote!(const { &Self::#def_ident }));
    }
    quote! {
        #imp

        #[doc(hidden)]
        #[allow(
            non_upper_case_globals,
            dead_code,
            deprecated,
            clippy::needless_pass_by_value,
            reason = "generated items: lowercase `__tool_<fn>_<what>` names, helpers a tool may not use, and calls of methods that may be deprecated"
        )]
        impl #impl_generics #self_ty #where_clause {
            #(#items)*
        }

        impl #impl_generics #krate::Toolset for #self_ty #where_clause {
            fn tools(
                self: ::std::sync::Arc<Self>,
            ) -> ::core::result::Result<::std::vec::Vec<#krate::Tool>, #krate::RegistryError> {
                #(#checks)*
                let receiver: ::std::sync::Arc<dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync> = self;
                #p::bound_tools(&receiver, &[#(#defs),*])
            }
        }
    }
}

/// One warning per parameter the model would see without a description
/// (`check::undocumented_params`), at the parameter. Stable Rust gives a
/// proc macro no warning of its own, so each is the use of a local constant
/// marked `#[deprecated]` whose note is the message: rustc prints it as
/// "warning: use of deprecated constant `…::parameter_without_description`:
/// parameter `q` of tool `search` reaches the model with no description; …".
/// Outside the generated items' `allow(deprecated)`, so `-D warnings` makes
/// it an error and `#[allow(deprecated)]` on the module silences it.
fn undocumented_warnings(tool: &ToolFn) -> TokenStream {
    let mut out = TokenStream::new();
    for param in check::undocumented_params(tool) {
        let span = param.ident.span();
        let note = format!(
            "parameter `{}` of tool `{}` reaches the model with no description; document it \
             with a `///` comment on the parameter, `#[arg(description = \"...\")]`, or an \
             entry `* `{}` - ...` in the fn doc's `# Arguments` section",
            param.name, tool.name, param.rust_name
        );
        let ident = Ident::new("parameter_without_description", span);
        out.extend(quote_spanned! {span=>
            const _: () = {
                #[deprecated(note = #note)]
                #[allow(non_upper_case_globals)]
                const #ident: () = ();
                #ident
            };
        });
    }
    out
}

/// The one `ToolFlags` literal: every field written out, so the generated
/// code breaks loudly if the struct gains a field the macro does not set.
fn expand_flags(flags: &ToolFlags, p: &TokenStream) -> TokenStream {
    let ToolFlags {
        read_only,
        destructive,
        idempotent,
        open_world,
        concurrency_safe,
        requires_confirmation,
        strict,
    } = *flags;
    quote! {
        #p::ToolFlags {
            read_only: #read_only,
            destructive: #destructive,
            idempotent: #idempotent,
            open_world: #open_world,
            concurrency_safe: #concurrency_safe,
            requires_confirmation: #requires_confirmation,
            strict: #strict,
        }
    }
}

/// The `T` of a `Result<T, ..>` return type.
fn result_ok_type(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    })
}

/// `tokens` with every token (and group) at `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner = Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

fn arg_var(param: &Param) -> Ident {
    format_ident!("__arg{}", param.index)
}

fn some(value: impl ToTokens) -> TokenStream {
    quote!(::core::option::Option::Some(#value))
}

fn none() -> TokenStream {
    quote!(::core::option::Option::None)
}

/// The type as a person would write it: `Vec<String>`, `Option<&str>`, `HashMap<String, u8>`.
fn type_string(ty: &Type) -> String {
    let mut out = String::new();
    push_tokens(ty.to_token_stream(), &mut out);
    out
}

fn push_tokens(tokens: TokenStream, out: &mut String) {
    let mut space_next = false;
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Ident(_) | TokenTree::Literal(_) => {
                if space_next || out.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    out.push(' ');
                }
                out.push_str(&token.to_string());
                space_next = false;
            }
            TokenTree::Punct(punct) => {
                let c = punct.as_char();
                let arrow = c == '-'
                    && punct.spacing() == Spacing::Joint
                    && matches!(tokens.peek(), Some(TokenTree::Punct(next)) if next.as_char() == '>');
                if arrow {
                    tokens.next();
                    out.push_str(" ->");
                    space_next = true;
                } else if matches!(c, ',' | ';') {
                    out.push(c);
                    space_next = true;
                } else if matches!(c, '+' | '=') {
                    out.push(' ');
                    out.push(c);
                    space_next = true;
                } else {
                    if space_next {
                        out.push(' ');
                    }
                    out.push(c);
                    space_next = false;
                }
            }
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                if space_next {
                    out.push(' ');
                }
                out.push_str(open);
                push_tokens(group.stream(), out);
                out.push_str(close);
                space_next = false;
            }
        }
    }
}

/// Whether `expr` is a plain string literal (`"reader"`), parentheses aside.
fn is_str_literal(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        }) => true,
        syn::Expr::Paren(inner) => is_str_literal(&inner.expr),
        syn::Expr::Group(inner) => is_str_literal(&inner.expr),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(tokens: TokenStream) -> String {
        type_string(&syn::parse2(tokens).unwrap())
    }

    /// The tool `tokens` (a fn) stands for, checked clean.
    fn tool(tokens: TokenStream) -> ToolFn {
        let mut errors = crate::errors::Errors::default();
        let args = crate::attr::parse_tool_args(TokenStream::new(), &mut errors);
        let tool = ToolFn::from_item(syn::parse2(tokens).unwrap(), args, &mut errors);
        check::check(&tool, &mut errors);
        assert!(errors.is_empty());
        tool
    }

    fn undocumented(tokens: TokenStream) -> Vec<String> {
        check::undocumented_params(&tool(tokens))
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// Each source of a description counts; context parameters are not the
    /// model's; `include_str!` docs are not judged.
    #[test]
    fn undocumented_parameters_are_the_visible_ones_with_no_description() {
        let names = undocumented(quote! {
            /// Search.
            ///
            /// # Arguments
            /// * `a` - By its Rust name.
            /// * `bee` - By its model-facing name.
            fn search(
                a: u8,
                #[arg(rename = "bee")] b: u8,
                /// Its own doc.
                c: u8,
                #[arg(description = "An attribute.")] d: u8,
                e: u8,
                ctx: &ToolContext,
                #[arg(rename = "gee")] g: u8,
            ) -> u8 { 0 }
        });
        assert_eq!(names, ["e", "gee"]);
        let tokens = quote! {
            #[doc = include_str!("x.md")]
            fn search(e: u8) -> u8 { 0 }
        };
        assert!(undocumented(tokens.clone()).is_empty());
        // And the expansion holds one warning per parameter, naming it.
        let text = undocumented_warnings(&tool(quote! {
            /// Search.
            fn search(e: u8, f: u8) -> u8 { 0 }
        }))
        .to_string();
        assert_eq!(text.matches("deprecated").count(), 2, "{text}");
        assert!(
            text.contains("parameter `f` of tool `search` reaches the model with no description")
        );
    }

    #[test]
    fn types_render_like_source() {
        assert_eq!(render(quote!(Vec<String>)), "Vec<String>");
        assert_eq!(render(quote!(Option<&'static str>)), "Option<&'static str>");
        assert_eq!(
            render(quote!(std::collections::HashMap<String, Vec<u8> >)),
            "std::collections::HashMap<String, Vec<u8>>"
        );
        assert_eq!(render(quote!([u8; 4])), "[u8; 4]");
        assert_eq!(render(quote!((u8, &mut String))), "(u8, &mut String)");
        assert_eq!(
            render(quote!(Box<dyn Fn(u8) -> u8 + Send>)),
            "Box<dyn Fn(u8) -> u8 + Send>"
        );
    }
}
