//! The model of one `#[tool]` fn: its name and description, each parameter
//! with its role (model-visible, hidden, context, state, flattened struct) and how it is filled,
//! and how its return value becomes a `ToolResult`.
//!
//! Everything here is read off the syntax: the macro cannot see types, so a
//! framework-filled parameter is one marked `#[context]` or, as a
//! convenience, one whose type's last path segment is `ToolContext`, `State`
//! or `CancellationToken`. Each is backed by a `FromToolContext` assertion
//! spanned at the parameter (`expand.rs`), so a look-alike type (axum's
//! `State`) fails to compile there instead of being taken for ours.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, ItemFn, LitStr, Pat, PathArguments, PathSegment, ReturnType,
    Type,
};

use crate::attr::{self, ArgAttr, DefaultArg, InjectArg, ToolArgs};
use crate::docs::Doc;
use crate::errors::Errors;

/// One `#[tool]` fn.
pub(crate) struct ToolFn {
    /// The user's fn, with our parameter attributes (`#[arg]`, `///`) removed.
    pub(crate) func: ItemFn,
    /// The attribute's options.
    pub(crate) args: ToolArgs,
    /// The tool name: `name = "..."` or the fn name.
    pub(crate) name: String,
    /// Where the name comes from: the `name` string or the fn identifier.
    pub(crate) name_span: Span,
    /// The fn's doc comment.
    pub(crate) doc: Doc,
    /// The parameters in declaration order (receivers and pattern parameters left out).
    pub(crate) params: Vec<Param>,
    /// How the return value is converted.
    pub(crate) output: Output,
}

/// One parameter of a tool fn.
pub(crate) struct Param {
    /// Position in the fn's parameter list (the index used at run time).
    pub(crate) index: usize,
    /// The parameter's identifier.
    pub(crate) ident: Ident,
    /// The Rust name (`r#type` → `type`).
    pub(crate) rust_name: String,
    /// The model-facing name: `#[arg(rename)]` or the Rust name.
    pub(crate) name: String,
    /// The type as written.
    pub(crate) ty: Type,
    /// What kind of value it receives.
    pub(crate) kind: ParamKind,
    /// Listed in `hidden_params`.
    pub(crate) hidden: bool,
    /// What happens when no value is supplied.
    pub(crate) fill: Fill,
    /// Its description, if it has its own.
    pub(crate) description: Option<Description>,
    /// Its `#[arg(...)]`.
    pub(crate) arg: ArgAttr,
    /// Its `inject_params` rule.
    pub(crate) inject: Option<InjectArg>,
}

/// What a parameter receives.
pub(crate) enum ParamKind {
    /// A JSON value: from the model, or from the context when hidden.
    Value,
    /// The call's context.
    Context(ContextForm),
    /// Typed state from the context: `State<T>`.
    State,
}

/// The accepted spellings of a context parameter (plus one that is rejected).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContextForm {
    /// `&ToolContext`.
    Ref,
    /// `ToolContext`.
    Owned,
    /// `Option<&ToolContext>`.
    OptionRef,
    /// `&mut ToolContext`: rejected by `check_context_form`.
    MutRef,
    /// Any other `FromToolContext` type: `CancellationToken`, or a parameter
    /// marked `#[context]` (an alias, a type of the user's own).
    Extractor,
}

/// The role a parameter has at run time (mirrors `ParamRole`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Visible,
    Hidden,
    Context,
    State,
    /// `#[arg(flatten)]`: a struct whose fields are model-visible parameters.
    Flattened,
}

/// What happens when a value parameter receives nothing.
pub(crate) enum Fill {
    /// A missing-parameter error.
    Required,
    /// `Option<T>`: `None`.
    Option,
    /// `#[arg(default)]`: `Default::default()`.
    DefaultTrait(Ident),
    /// `#[arg(default = EXPR)]`: `EXPR`, also shown as the schema's `default`.
    DefaultExpr(Box<syn::Expr>),
}

/// Where a parameter's description comes from.
pub(crate) enum Description {
    /// `#[arg(description = "...")]`.
    Attr(LitStr),
    /// The parameter's own `///` doc comment.
    Doc(Doc),
}

/// How the return value becomes a `ToolResult`, read off the return type.
pub(crate) struct Output {
    /// The conversion.
    pub(crate) shape: Shape,
    /// The return type's span (the fn name's without a return type).
    pub(crate) span: Span,
}

/// The conversion of a return value.
pub(crate) enum Shape {
    /// `ToolResult`, `String`, `&str`, `Cow<str>` or `()`: `into_result(out)`.
    Direct,
    /// Any other type: `into_result(Json(out))`.
    Json,
    /// `Result<T, ..>`: the `Ok` value converted as `ok`; `err` is `E` when written out.
    Result {
        ok_direct: bool,
        err: Option<Box<Type>>,
    },
}

impl ToolFn {
    /// Builds the model of `func` with the options `args`. Parameters whose
    /// pattern is not a plain identifier, and `self` receivers, are left out
    /// (`check_signature` reports them).
    pub(crate) fn from_item(mut func: ItemFn, args: ToolArgs, errors: &mut Errors) -> Self {
        let (name, name_span) = match &args.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (func.sig.ident.unraw().to_string(), func.sig.ident.span()),
        };
        let doc = Doc::from_attrs(&func.attrs);
        let mut params = Vec::new();
        for (index, input) in func.sig.inputs.iter_mut().enumerate() {
            let FnArg::Typed(pat_type) = input else {
                continue;
            };
            let arg = attr::parse_arg_attrs(&pat_type.attrs, errors);
            let marked = attr::context_marker(&pat_type.attrs, errors);
            let param_doc = Doc::from_attrs(&pat_type.attrs);
            pat_type.attrs.retain(|a| {
                !a.path().is_ident("doc") && !attr::is_arg_attr(a) && !attr::is_context_attr(a)
            });
            let Pat::Ident(pat) = &*pat_type.pat else {
                continue;
            };
            params.push(Param::from_parts(
                index,
                pat.ident.clone(),
                (*pat_type.ty).clone(),
                arg,
                param_doc,
                marked,
                &args,
            ));
        }
        let output = Output::from_return(&func.sig.output, func.sig.ident.span());
        Self {
            func,
            args,
            name,
            name_span,
            doc,
            params,
            output,
        }
    }

    /// The identifier the generated items are named after (`__tool_<fn>_<what>`).
    pub(crate) fn ident_base(&self) -> String {
        self.func.sig.ident.unraw().to_string()
    }

    /// Whether some parameter is `#[arg(flatten)]`: then the tool has
    /// parameters (its struct's fields) the macro cannot see, and names it
    /// cannot find may be fields, checked when the tool registers.
    pub(crate) fn has_flattened(&self) -> bool {
        self.params.iter().any(Param::is_flattened)
    }

    /// The parameter whose Rust name is `rust_name`.
    pub(crate) fn param_by_rust_name(&self, rust_name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.rust_name == rust_name)
    }
}

impl Param {
    fn from_parts(
        index: usize,
        ident: Ident,
        ty: Type,
        arg: ArgAttr,
        doc: Doc,
        marked: bool,
        args: &ToolArgs,
    ) -> Self {
        let rust_name = ident.unraw().to_string();
        let name = arg
            .rename
            .as_ref()
            .map_or_else(|| rust_name.clone(), LitStr::value);
        let kind = if let Some(form) = context_form(&ty) {
            ParamKind::Context(form)
        } else if state_inner(&ty).is_some() {
            ParamKind::State
        } else if marked || is_path_named(&ty, "CancellationToken") {
            ParamKind::Context(ContextForm::Extractor)
        } else {
            ParamKind::Value
        };
        let fill = match &arg.default {
            Some(DefaultArg::Expr(expr)) => Fill::DefaultExpr(expr.clone()),
            Some(DefaultArg::Trait(key)) => Fill::DefaultTrait(key.clone()),
            None if option_inner(&ty).is_some() => Fill::Option,
            None => Fill::Required,
        };
        let description = match &arg.description {
            Some(lit) => Some(Description::Attr(lit.clone())),
            None if !doc.is_missing() && !doc.is_known_blank() => Some(Description::Doc(doc)),
            None => None,
        };
        let hidden = args.hidden_params.iter().any(|h| h.value() == rust_name);
        let inject = args
            .inject_params
            .iter()
            .find(|rule| rule.param.unraw() == rust_name)
            .cloned();
        Self {
            index,
            ident,
            rust_name,
            name,
            ty,
            kind,
            hidden,
            fill,
            description,
            arg,
            inject,
        }
    }

    /// The role at run time. A flattened parameter stays `Flattened` even
    /// when it is (wrongly) listed in `hidden_params`: `check_flatten`
    /// reports that.
    pub(crate) fn role(&self) -> Role {
        match self.kind {
            ParamKind::Context(_) => Role::Context,
            ParamKind::State => Role::State,
            ParamKind::Value if self.arg.flatten.is_some() => Role::Flattened,
            ParamKind::Value if self.hidden => Role::Hidden,
            ParamKind::Value => Role::Visible,
        }
    }

    /// Whether it is `#[arg(flatten)]` on a value parameter (its struct's
    /// fields are the tool's parameters).
    pub(crate) fn is_flattened(&self) -> bool {
        self.role() == Role::Flattened
    }

    /// Whether the model may omit it: `Option<T>` or a default.
    pub(crate) fn is_optional(&self) -> bool {
        !matches!(self.fill, Fill::Required)
    }

    /// The span of the name the model sees: the `rename` string, else the identifier.
    pub(crate) fn name_span(&self) -> Span {
        self.arg
            .rename
            .as_ref()
            .map_or_else(|| self.ident.span(), LitStr::span)
    }
}

impl Output {
    fn from_return(output: &ReturnType, fn_span: Span) -> Self {
        let ReturnType::Type(_, ty) = output else {
            return Self {
                shape: Shape::Direct,
                span: fn_span,
            };
        };
        let shape = match last_segment(ty) {
            Some(seg) if seg.ident == "Result" => {
                let mut types = generic_types(seg);
                let ok = types.next();
                let err = types.next().cloned().map(Box::new);
                Shape::Result {
                    ok_direct: ok.is_none_or(converts_directly),
                    err,
                }
            }
            _ if converts_directly(ty) => Shape::Direct,
            _ => Shape::Json,
        };
        Self {
            shape,
            span: ty.span(),
        }
    }
}

/// `ToolResult`, `String`, `&str`, `Cow<str>` and `()` implement `IntoToolResult` themselves.
fn converts_directly(ty: &Type) -> bool {
    match ungroup(ty) {
        Type::Tuple(t) => t.elems.is_empty(),
        Type::Reference(r) => is_path_named(&r.elem, "str"),
        _ => match last_segment(ty) {
            Some(seg) if seg.ident == "ToolResult" || seg.ident == "String" => true,
            Some(seg) if seg.ident == "Cow" => generic_types(seg)
                .next()
                .is_some_and(|t| is_path_named(t, "str")),
            _ => false,
        },
    }
}

/// Looks through invisible groups and parentheses.
pub(crate) fn ungroup(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(g) => ty = &g.elem,
            Type::Paren(p) => ty = &p.elem,
            _ => return ty,
        }
    }
}

/// The last segment of a plain path type (`a::b::C<T>` → `C<T>`).
fn last_segment(ty: &Type) -> Option<&PathSegment> {
    match ungroup(ty) {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

/// A path type whose last segment is `name` without generic arguments.
fn is_path_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|seg| seg.ident == name && seg.arguments.is_none())
}

/// The type arguments of a segment (`Result<T, E>` → `T`, `E`; lifetimes skipped).
fn generic_types(seg: &PathSegment) -> impl Iterator<Item = &Type> {
    let args = match &seg.arguments {
        PathArguments::AngleBracketed(a) => Some(a.args.iter()),
        _ => None,
    };
    args.into_iter().flatten().filter_map(|arg| match arg {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// `Option<T>` → `T`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let seg = last_segment(ty).filter(|seg| seg.ident == "Option")?;
    let mut types = generic_types(seg);
    let inner = types.next()?;
    types.next().is_none().then_some(inner)
}

/// `State<T>` → `T`.
fn state_inner(ty: &Type) -> Option<&Type> {
    let seg = last_segment(ty).filter(|seg| seg.ident == "State")?;
    let mut types = generic_types(seg);
    let inner = types.next()?;
    types.next().is_none().then_some(inner)
}

/// Which context spelling `ty` is, if any.
fn context_form(ty: &Type) -> Option<ContextForm> {
    match ungroup(ty) {
        Type::Reference(r) if is_path_named(&r.elem, "ToolContext") => {
            Some(if r.mutability.is_some() {
                ContextForm::MutRef
            } else {
                ContextForm::Ref
            })
        }
        _ if is_path_named(ty, "ToolContext") => Some(ContextForm::Owned),
        _ => match option_inner(ty).map(ungroup) {
            Some(Type::Reference(r))
                if r.mutability.is_none() && is_path_named(&r.elem, "ToolContext") =>
            {
                Some(ContextForm::OptionRef)
            }
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn ty(tokens: proc_macro2::TokenStream) -> Type {
        syn::parse2(tokens).unwrap()
    }

    fn shape(tokens: proc_macro2::TokenStream) -> &'static str {
        let ret: ReturnType = syn::parse2(tokens).unwrap();
        match Output::from_return(&ret, Span::call_site()).shape {
            Shape::Direct => "direct",
            Shape::Json => "json",
            Shape::Result {
                ok_direct: true,
                err: Some(_),
            } => "result direct, err",
            Shape::Result {
                ok_direct: true,
                err: None,
            } => "result direct",
            Shape::Result {
                ok_direct: false,
                err: Some(_),
            } => "result json, err",
            Shape::Result {
                ok_direct: false,
                err: None,
            } => "result json",
        }
    }

    #[test]
    fn classifies_return_types() {
        assert_eq!(shape(quote!()), "direct");
        assert_eq!(shape(quote!(-> ())), "direct");
        assert_eq!(shape(quote!(-> String)), "direct");
        assert_eq!(shape(quote!(-> &'static str)), "direct");
        assert_eq!(shape(quote!(-> std::borrow::Cow<'static, str>)), "direct");
        assert_eq!(shape(quote!(-> tool_core::ToolResult)), "direct");
        assert_eq!(shape(quote!(-> Vec<u8>)), "json");
        assert_eq!(shape(quote!(-> Cow<'static, [u8]>)), "json");
        assert_eq!(
            shape(quote!(-> Result<String, MyError>)),
            "result direct, err"
        );
        assert_eq!(shape(quote!(-> io::Result<()>)), "result direct");
        assert_eq!(shape(quote!(-> anyhow::Result<Report>)), "result json");
        assert_eq!(shape(quote!(-> Result<Report, String>)), "result json, err");
    }

    #[test]
    fn recognises_context_state_and_option() {
        assert!(context_form(&ty(quote!(&ToolContext))) == Some(ContextForm::Ref));
        assert!(context_form(&ty(quote!(tool_core::ToolContext))) == Some(ContextForm::Owned));
        assert!(
            context_form(&ty(quote!(Option<&tool_core::ToolContext>)))
                == Some(ContextForm::OptionRef)
        );
        assert!(context_form(&ty(quote!(&mut ToolContext))) == Some(ContextForm::MutRef));
        assert!(context_form(&ty(quote!(Option<ToolContext>))).is_none());
        assert!(state_inner(&ty(quote!(State<Db>))).is_some());
        assert!(state_inner(&ty(quote!(State))).is_none());
        assert!(option_inner(&ty(quote!(std::option::Option<u8>))).is_some());
        assert!(option_inner(&ty(quote!(Optional<u8>))).is_none());
    }
}
