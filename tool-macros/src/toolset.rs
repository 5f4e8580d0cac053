//! `#[toolset]` on an `impl` block: each `#[tool]` method becomes a tool bound
//! to an instance (see `tool_core::Toolset`). The methods go through the same
//! model (`ast`) and rules (`check`) as free fns, with the receiver taken out
//! first; the rules that only methods have are here.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{FnArg, ImplItem, ItemFn, ItemImpl, Meta, Type, Visibility};

use crate::ast::ToolFn;
use crate::errors::Errors;
use crate::expand::{self, Receiver};
use crate::{attr, check};

/// parse → check → expand for one impl block; on any error, the impl block
/// (our attributes removed, so it still compiles) and every error.
pub(crate) fn toolset_impl(args: &TokenStream, item: &TokenStream) -> TokenStream {
    let Ok(mut imp) = syn::parse2::<ItemImpl>(item.clone()) else {
        let error = syn::Error::new_spanned(
            item,
            "#[toolset] goes on an `impl` block whose methods marked `#[tool]` become tools: `#[toolset] impl Notes { ... }`",
        )
        .to_compile_error();
        return quote!(#error #item);
    };
    let mut errors = Errors::default();
    if !args.is_empty() {
        errors.spanned(
            args,
            "#[toolset] takes no options: put them on each method's `#[tool(...)]`",
        );
    }
    // Rule: `#[toolset]` goes on an inherent impl, not a trait impl.
    // Reason: the generated `Toolset` impl and helper items are inherent to
    // the type; a trait impl cannot hold them.
    if let Some((_, path, _)) = &imp.trait_ {
        errors.spanned(
            path,
            "#[toolset] goes on an inherent `impl Type { ... }` block, not on a trait impl",
        );
    }
    let mut tools = Vec::new();
    for item in &mut imp.items {
        let ImplItem::Fn(method) = item else {
            continue;
        };
        let Some(pos) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else {
            continue;
        };
        let tool_attr = method.attrs.remove(pos);
        let tokens = match &tool_attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(nv) => {
                errors.spanned(nv, "expected `#[tool]` or `#[tool(...)]`");
                continue;
            }
        };
        let Some(receiver) = receiver_kind(&method.sig, &mut errors) else {
            strip_param_attrs(&mut method.sig);
            continue;
        };
        let args = attr::parse_tool_args(tokens, &mut errors);
        let mut sig = method.sig.clone();
        sig.inputs = sig
            .inputs
            .into_iter()
            .filter(|input| matches!(input, FnArg::Typed(_)))
            .collect();
        let func = ItemFn {
            attrs: method.attrs.clone(),
            vis: Visibility::Inherited,
            sig,
            block: Box::new(method.block.clone()),
        };
        let tool = ToolFn::from_item(func, args, &mut errors);
        check::check(&tool, &mut errors);
        // The method keeps its receiver; its parameters lose our attributes.
        let receiver_arg = method.sig.inputs.first().cloned();
        method.sig.inputs = receiver_arg
            .into_iter()
            .chain(tool.func.sig.inputs.iter().cloned())
            .collect();
        // As on a free `#[tool]` fn (`expand`): parameters are deserialised
        // into owned values, so taking them by value is the contract.
        method.attrs.push(syn::parse_quote!(#[allow(
            clippy::needless_pass_by_value,
            reason = "#[tool] parameters are deserialized into owned values, so taking them by value is the contract"
        )]));
        tools.push((tool, receiver));
    }
    check_unique_names(&tools, &mut errors);
    if errors.is_empty() {
        expand::expand_toolset(&imp, &tools)
    } else {
        let errors = errors.to_compile_errors();
        quote!(#imp #errors)
    }
}

/// Removes `#[arg]`, `#[context]` and parameter docs, which rustc would reject.
fn strip_param_attrs(sig: &mut syn::Signature) {
    for input in &mut sig.inputs {
        if let FnArg::Typed(pat_type) = input {
            pat_type.attrs.retain(|a| {
                !a.path().is_ident("doc") && !attr::is_arg_attr(a) && !attr::is_context_attr(a)
            });
        }
    }
}

// Rule: a toolset method takes `&self` or `self: Arc<Self>`.
// Reason: one instance serves every call, possibly many at once, so a call
// can only share it: `&mut self` would need exclusive access and `self` by
// value would consume it. State that changes goes behind a lock.
fn receiver_kind(sig: &syn::Signature, errors: &mut Errors) -> Option<Receiver> {
    let Some(receiver) = sig.receiver() else {
        errors.spanned(
            &sig.ident,
            "a #[toolset] tool is a method taking `&self` or `self: Arc<Self>`; a fn without `self` can be a free `#[tool]` fn outside the impl block",
        );
        return None;
    };
    if receiver.reference.is_some() && receiver.mutability.is_some() {
        errors.spanned(
            receiver,
            "a #[toolset] tool cannot take `&mut self`: calls share one instance and may run at once; take `&self` and keep changing state behind a `Mutex` or `RwLock`",
        );
        return None;
    }
    if receiver.reference.is_some() {
        return Some(Receiver::Ref);
    }
    if receiver.colon_token.is_some() && is_arc_self(&receiver.ty) {
        return Some(Receiver::Arc);
    }
    errors.spanned(
        receiver,
        "a #[toolset] tool takes `&self` or `self: Arc<Self>`: the instance is shared by every call, so it cannot be taken by value",
    );
    None
}

/// `Arc<Self>` (any path ending in `Arc`).
fn is_arc_self(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    path.path.segments.last().is_some_and(|seg| {
        seg.ident == "Arc"
            && seg.arguments.to_token_stream().to_string().replace(' ', "") == "<Self>"
    })
}

// Rule: no two tools of one toolset share a name.
// Reason: `tools()` returns them together, and a registry refuses the second
// of two tools with one name; within one impl that is always a mistake.
fn check_unique_names(tools: &[(ToolFn, Receiver)], errors: &mut Errors) {
    let mut seen: HashMap<&str, String> = HashMap::new();
    for (tool, _) in tools {
        match seen.get(tool.name.as_str()) {
            Some(first) => errors.at(
                tool.name_span,
                format!(
                    "duplicate tool name `{}`: method `{first}` of this toolset already uses it; set another with `#[tool(name = \"...\")]`",
                    tool.name
                ),
            ),
            None => {
                seen.insert(&tool.name, tool.ident_base());
            }
        }
    }
}
