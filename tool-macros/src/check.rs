//! The rules a `#[tool]` fn must follow, one `check_*` fn per rule. Each
//! opens with the rule and the reason for it. Every rule reports into the same
//! [`Errors`], so one compile shows every mistake.
//!
//! Rules that need types (is a parameter `Deserialize`?) cannot be checked
//! here; `expand.rs` emits assertions spanned at the parameter for them.

use std::collections::HashMap;

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{
    FnArg, GenericArgument, GenericParam, Ident, LitStr, Pat, PathArguments, ReturnType, Type,
    TypeParamBound,
};

use crate::ast::{ContextForm, Description, ParamKind, Role, ToolFn, option_inner, ungroup};
use crate::attr::DefaultArg;
use crate::errors::Errors;
use tool_rules::suggest::{all_of, did_you_mean};
use tool_rules::{names, url_pattern};

/// Runs every rule on `tool`.
pub(crate) fn check(tool: &ToolFn, errors: &mut Errors) {
    check_free_fn(tool, errors);
    check_not_generic(tool, errors);
    check_no_impl_trait(tool, errors);
    check_safe_rust_abi(tool, errors);
    check_plain_params(tool, errors);
    check_no_cfg_on_params(tool, errors);
    check_tool_name(tool, errors);
    check_description(tool, errors);
    check_context_form(tool, errors);
    check_owned_param_types(tool, errors);
    check_arg_on_framework_params(tool, errors);
    check_param_names(tool, errors);
    check_unique_param_names(tool, errors);
    check_flatten(tool, errors);
    check_hidden_params(tool, errors);
    check_documented_params(tool, errors);
    check_editable_params(tool, errors);
    check_inject_params(tool, errors);
    check_display(tool, errors);
    check_url_patterns(tool, errors);
    check_tags(tool, errors);
}

// Rule: `#[tool]` on its own goes on free functions, not on methods (no
// `self` receiver); methods become tools through `#[toolset]` on their impl
// block, which takes the receiver out before these rules run.
// Reason: a free tool is called through a plain fn pointer registered at
// link time; there is no value to pass as `self` unless a toolset binds one.
fn check_free_fn(tool: &ToolFn, errors: &mut Errors) {
    for input in &tool.func.sig.inputs {
        if let FnArg::Receiver(receiver) = input {
            errors.spanned(
                receiver,
                "a #[tool] method needs `#[toolset]` on its `impl` block (`#[toolset] impl MyType { ... }`), which binds its tools to an instance; or make it a free fn",
            );
        }
    }
}

// Rule: no generic parameters (types, consts or lifetimes) and no `where` clause.
// Reason: the registry needs one concrete fn to call and one schema per
// parameter; a generic fn has neither until someone picks the types.
fn check_not_generic(tool: &ToolFn, errors: &mut Errors) {
    let generics = &tool.func.sig.generics;
    if generics
        .params
        .iter()
        .all(|p| matches!(p, GenericParam::Lifetime(_)))
        && !generics.params.is_empty()
    {
        errors.spanned(
            generics,
            "#[tool] fns cannot have lifetime parameters: arguments are deserialized into owned values, so use owned types such as `String`",
        );
    } else if !generics.params.is_empty() {
        errors.spanned(
            generics,
            "#[tool] fns cannot be generic: the framework calls them with concrete types and describes each parameter's type with a schema",
        );
    } else if let Some(where_clause) = &generics.where_clause {
        errors.spanned(
            where_clause,
            "#[tool] fns cannot have a `where` clause: use concrete types",
        );
    }
}

// Rule: no `impl Trait` in parameter types.
// Reason: `impl Trait` in argument position is a hidden generic parameter (see
// `check_not_generic`).
fn check_no_impl_trait(tool: &ToolFn, errors: &mut Errors) {
    for input in &tool.func.sig.inputs {
        if let FnArg::Typed(pat_type) = input {
            if let Some(found) = find_in_type(&pat_type.ty, &|t| matches!(t, Type::ImplTrait(_))) {
                errors.spanned(
                    found,
                    "`impl Trait` parameters make the fn generic: #[tool] needs a concrete parameter type",
                );
            }
        }
    }
}

/// The first type inside `ty` (itself included, outermost first) for which `pred` holds.
fn find_in_type<'a>(ty: &'a Type, pred: &dyn Fn(&Type) -> bool) -> Option<&'a Type> {
    if pred(ty) {
        return Some(ty);
    }
    let in_args = |args: &'a PathArguments| -> Option<&'a Type> {
        match args {
            PathArguments::AngleBracketed(a) => a.args.iter().find_map(|arg| match arg {
                GenericArgument::Type(t) => find_in_type(t, pred),
                _ => None,
            }),
            PathArguments::Parenthesized(p) => p
                .inputs
                .iter()
                .find_map(|t| find_in_type(t, pred))
                .or(match &p.output {
                    ReturnType::Type(_, t) => find_in_type(t, pred),
                    ReturnType::Default => None,
                }),
            PathArguments::None => None,
        }
    };
    match ty {
        Type::Group(t) => find_in_type(&t.elem, pred),
        Type::Paren(t) => find_in_type(&t.elem, pred),
        Type::Reference(t) => find_in_type(&t.elem, pred),
        Type::Ptr(t) => find_in_type(&t.elem, pred),
        Type::Slice(t) => find_in_type(&t.elem, pred),
        Type::Array(t) => find_in_type(&t.elem, pred),
        Type::Tuple(t) => t.elems.iter().find_map(|t| find_in_type(t, pred)),
        Type::TraitObject(t) => t.bounds.iter().find_map(|b| match b {
            TypeParamBound::Trait(tb) => {
                tb.path.segments.iter().find_map(|s| in_args(&s.arguments))
            }
            _ => None,
        }),
        Type::Path(t) => t.path.segments.iter().find_map(|s| in_args(&s.arguments)),
        _ => None,
    }
}

// Rule: no `unsafe`, no `extern "ABI"`, no C variadics.
// Reason: the generated shim calls the fn like any safe Rust fn; it has no
// way to uphold an `unsafe` contract, and a foreign ABI buys nothing here.
fn check_safe_rust_abi(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.func.sig;
    if let Some(unsafety) = &sig.unsafety {
        errors.spanned(
            unsafety,
            "#[tool] fns cannot be `unsafe`: the framework calls them with model-supplied arguments and cannot uphold a safety contract",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "#[tool] fns cannot be `extern`: write a plain Rust fn");
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "#[tool] fns cannot be variadic");
    }
}

// Rule: every parameter is a plain name (`query: String`, `mut n: u32`), not a
// pattern such as `(a, b): (u8, u8)` or `_: u8`.
// Reason: the name becomes the JSON property the model fills.
fn check_plain_params(tool: &ToolFn, errors: &mut Errors) {
    for input in &tool.func.sig.inputs {
        let FnArg::Typed(pat_type) = input else {
            continue;
        };
        let plain =
            matches!(&*pat_type.pat, Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none());
        if !plain {
            errors.spanned(
                &pat_type.pat,
                "tool parameters need a plain name, which becomes the JSON property the model fills: write `name: Type` and destructure in the body",
            );
        }
    }
}

// Rule: no `#[cfg]` or `#[cfg_attr]` on parameters.
// Reason: the shim passes arguments by position; a parameter that may vanish
// after expansion would shift every position after it.
fn check_no_cfg_on_params(tool: &ToolFn, errors: &mut Errors) {
    for input in &tool.func.sig.inputs {
        let FnArg::Typed(pat_type) = input else {
            continue;
        };
        for attr in &pat_type.attrs {
            if attr.path().is_ident("cfg") || attr.path().is_ident("cfg_attr") {
                errors.spanned(
                    attr,
                    "`#[cfg]` on a tool parameter is not supported: a tool has the same parameters in every build",
                );
            }
        }
    }
}

// Rule: the tool name matches ^[a-zA-Z0-9_-]{1,64}$.
// Reason: OpenAI and Anthropic require tool names to match ^[a-zA-Z0-9_-]{1,64}$;
// a name they refuse fails the whole request, so it is caught at compile time.
fn check_tool_name(tool: &ToolFn, errors: &mut Errors) {
    let name = &tool.name;
    let Some(problem) = names::tool_name_problem(name) else {
        return;
    };
    let rule = names::TOOL_NAME_RULE;
    let hint = if tool.args.name.is_none() {
        "; set another with `#[tool(name = \"...\")]`"
    } else {
        ""
    };
    errors.at(
        tool.name_span,
        format!("invalid tool name `{name}`: {problem}; {rule}{hint}"),
    );
}

// Rule: a tool has a description: a doc comment on the fn that is not blank.
// Reason: the description is what the model reads to decide when to call the
// tool; a tool without one is effectively invisible. (A doc from
// `include_str!` is checked by an assertion `expand.rs` emits.)
fn check_description(tool: &ToolFn, errors: &mut Errors) {
    if tool.doc.is_missing() || tool.doc.is_known_blank() {
        errors.spanned(
            &tool.func.sig.ident,
            "a tool needs a description: add a doc comment (`/// ...`) saying what it does and when to use it",
        );
    }
}

// Rule: a context parameter is `&ToolContext`, `ToolContext` or `Option<&ToolContext>`.
// Reason: each call gets its own context value, shared with the framework;
// `&mut` would suggest changes that nobody sees.
fn check_context_form(tool: &ToolFn, errors: &mut Errors) {
    for param in &tool.params {
        if matches!(param.kind, ParamKind::Context(ContextForm::MutRef)) {
            errors.spanned(
                &param.ty,
                "a context parameter cannot be `&mut`: take `&ToolContext`, `ToolContext` or `Option<&ToolContext>`",
            );
        }
    }
}

// Rule: parameters that hold a JSON value have owned types: no reference
// anywhere in the type (`&str`, `Option<&str>`, `Vec<&'static str>`).
// Context parameters (`&ToolContext`) are not JSON values and are exempt.
// Reason: arguments are deserialized from JSON owned by the call, which a
// borrowed type cannot point into; rustc's own error for this ("not general
// enough") does not say what to do.
fn check_owned_param_types(tool: &ToolFn, errors: &mut Errors) {
    for param in tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Value))
    {
        let Some(Type::Reference(reference)) =
            find_in_type(&param.ty, &|t| matches!(t, Type::Reference(_)))
        else {
            continue;
        };
        let owned = match ungroup(&reference.elem) {
            Type::Path(p) if p.path.is_ident("str") => "`String`".to_owned(),
            Type::Slice(s) => format!("`Vec<{}>`", s.elem.to_token_stream()),
            _ => "an owned type".to_owned(),
        };
        errors.spanned(
            reference,
            format!(
                "tool parameters are deserialized into owned values and cannot borrow: use {owned} instead of a reference"
            ),
        );
    }
}

// Rule: `#[arg(...)]` only goes on parameters that hold a JSON value, not on
// context or `State<T>` parameters.
// Reason: those are filled by the framework; a description, default or rename
// there would silently do nothing.
fn check_arg_on_framework_params(tool: &ToolFn, errors: &mut Errors) {
    for param in &tool.params {
        let what = match param.kind {
            ParamKind::Context(_) => "a context parameter",
            ParamKind::State => "a `State<T>` parameter",
            ParamKind::Value => continue,
        };
        if let Some(span) = param.arg.span {
            errors.at(
                span,
                format!("`#[arg]` has no effect on {what}: the framework fills it and the model never sees it"),
            );
        }
    }
}

// Rule: model-facing parameter names match ^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$.
// Reason: they become JSON Schema property names, and providers restrict
// those (Anthropic: ^[a-zA-Z0-9_.-]{1,64}$); starting with a letter or `_`
// also keeps them valid identifiers in generated client code.
fn check_param_names(tool: &ToolFn, errors: &mut Errors) {
    for param in tool
        .params
        .iter()
        .filter(|p| matches!(p.role(), Role::Visible | Role::Hidden))
    {
        if names::is_valid_param_name(&param.name) {
            continue;
        }
        let fix = if param.arg.rename.is_some() {
            ""
        } else {
            "; choose another with `#[arg(rename = \"...\")]`"
        };
        errors.at(
            param.name_span(),
            format!(
                "invalid parameter name `{}`: {}{fix}",
                param.name,
                names::PARAM_NAME_RULE
            ),
        );
    }
}

// Rule: no two parameters share a name (after `rename`).
// Reason: arguments arrive as one JSON object keyed by name, and hidden
// parameters are looked up in the context by name; two parameters with one
// name would receive the same value.
fn check_unique_param_names(tool: &ToolFn, errors: &mut Errors) {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    // A flattened parameter's own name is no JSON property (its fields are);
    // clashes with its fields are found when the tool registers.
    for param in tool.params.iter().filter(|p| !p.is_flattened()) {
        match seen.get(param.name.as_str()) {
            Some(first) => errors.at(
                param.name_span(),
                format!(
                    "duplicate parameter name `{}`: parameter `{first}` already uses it",
                    param.name
                ),
            ),
            None => {
                seen.insert(&param.name, &param.rust_name);
            }
        }
    }
}

// Rule: `#[arg(flatten)]` goes on a value parameter of a struct type, alone:
// no `default`, `rename` or `description` beside it, no doc comment, not
// `Option<T>`, not hidden.
// Reason: the struct's fields become the tool's top-level parameters, each
// named, described and made optional by the struct itself (serde and
// schemars attributes, field doc comments); the parameter has no JSON
// property of its own for those to apply to, so each would silently do
// nothing. The model fills the fields, so the struct cannot be hidden either.
fn check_flatten(tool: &ToolFn, errors: &mut Errors) {
    for param in tool.params.iter().filter(|p| p.is_flattened()) {
        let fix = "the struct's fields are the parameters";
        if let Some(lit) = &param.arg.rename {
            errors.spanned(
                lit,
                format!("`rename` has no effect with `flatten`: {fix}; rename a field with `#[serde(rename = \"...\")]`"),
            );
        }
        if let Some(lit) = &param.arg.description {
            errors.spanned(
                lit,
                format!("`description` has no effect with `flatten`: {fix}; their doc comments describe them"),
            );
        }
        if let Some(Description::Doc(_)) = &param.description {
            errors.spanned(
                &param.ident,
                format!("a doc comment on a flattened parameter is never shown: {fix}; document the fields of the struct"),
            );
        }
        if let Some(default) = &param.arg.default {
            let message = format!(
                "`default` has no effect with `flatten`: {fix}; make a field optional with `Option<T>` or `#[serde(default)]`"
            );
            match default {
                DefaultArg::Trait(key) => errors.spanned(key, message),
                DefaultArg::Expr(expr) => errors.spanned(expr, message),
            }
        }
        if option_inner(&param.ty).is_some() {
            errors.spanned(
                &param.ty,
                format!("a flattened struct cannot be `Option<T>`: {fix}; make each field optional instead (`Option<T>` or `#[serde(default)]`)"),
            );
        }
        if param.hidden
            && let Some(lit) = tool
                .args
                .hidden_params
                .iter()
                .find(|lit| lit.value() == param.rust_name)
        {
            errors.spanned(
                lit,
                format!(
                    "`{}` cannot be hidden: it is {}",
                    param.rust_name,
                    role_phrase(Role::Flattened)
                ),
            );
        }
    }
}

// Rule: `hidden_params` names parameters of the fn, each once.
// Reason: a misspelt name would leave the intended parameter visible to the
// model, which is exactly what hiding is meant to prevent.
fn check_hidden_params(tool: &ToolFn, errors: &mut Errors) {
    let mut seen: Vec<String> = Vec::new();
    for lit in &tool.args.hidden_params {
        let name = lit.value();
        if seen.contains(&name) {
            errors.spanned(lit, format!("duplicate `{name}`"));
        } else if tool.param_by_rust_name(&name).is_none() {
            errors.spanned(
                lit,
                format!(
                    "{} (a hidden value must also be a parameter of the fn: `hidden_params` only keeps it out of the schema the model sees, and each call fills it from the context value of the same name; to hide a new value, add it to the signature, e.g. `{name}: String`)",
                    unknown_param_or_field(tool, &name, "hidden_params")
                ),
            );
        }
        seen.push(name);
    }
}

// Rule: every entry of a `# Arguments` / `Args:` section of the doc comment
// names a parameter of the fn (model-visible, hidden, injected or filled by
// the framework: any of them may be documented), by its Rust name or its
// model-facing name.
// Reason: the classic rename drift: `query` becomes `terms`, the doc still
// says `query`, it compiles, and `terms` reaches the model undocumented. The
// sections are read by `tool_rules::docs`, as the runtime reads them. Not
// checked when a doc part is `include_str!` (its text is rustc's) or when a
// flattened struct's fields are parameters (they are not known here).
fn check_documented_params(tool: &ToolFn, errors: &mut Errors) {
    if tool.has_flattened() {
        return;
    }
    let Some(lines) = tool.doc.literal_lines() else {
        return;
    };
    let texts: Vec<&str> = lines.iter().map(|(text, _)| *text).collect();
    let mut names: Vec<&str> = Vec::new();
    for p in &tool.params {
        names.push(p.rust_name.as_str());
        if p.name != p.rust_name {
            names.push(p.name.as_str());
        }
    }
    for section in tool_rules::docs::arg_sections(&texts) {
        let heading = texts[section.start].trim();
        for item in section.items {
            if names.contains(&item.name.as_str()) {
                continue;
            }
            let span = lines[item.line].1;
            let fix = match did_you_mean(&item.name, names.iter().copied()) {
                Some(close) => format!("did you mean `{close}`?"),
                None if names.is_empty() => "the fn has no parameters; remove the entry".to_owned(),
                None => format!("the parameters are {}", all_of(&names)),
            };
            errors.at(
                span,
                format!(
                    "`{heading}` documents `{}`, which is not a parameter of this fn; {fix}",
                    item.name
                ),
            );
        }
    }
}

/// The model-visible parameters that reach the model with no description:
/// none of their own (`///` or `#[arg(description)]`) and no entry in a
/// `# Arguments` / `Args:` section under either name. Empty when the fn's
/// doc is not all literal text (`include_str!`: its entries are unknown
/// here). Flattened structs are left out: their fields carry their own docs.
/// `#[tool]` emits a warning for each (issue 24, review 3 M4; see
/// `expand::undocumented_warnings`).
pub(crate) fn undocumented_params(tool: &ToolFn) -> Vec<&crate::ast::Param> {
    let Some(lines) = tool.doc.literal_lines() else {
        return Vec::new();
    };
    let texts: Vec<&str> = lines.iter().map(|(text, _)| *text).collect();
    let entries: Vec<String> = tool_rules::docs::arg_sections(&texts)
        .into_iter()
        .flat_map(|section| section.items)
        .map(|item| item.name)
        .collect();
    tool.params
        .iter()
        .filter(|p| matches!(p.role(), Role::Visible) && p.description.is_none())
        .filter(|p| !entries.iter().any(|e| *e == p.rust_name || *e == p.name))
        .collect()
}

// Rule: `editable_params` names model-visible parameters, each once.
// Reason: a person edits the arguments the model proposed; hidden and context
// parameters are not among them, and a misspelt name would make nothing editable.
fn check_editable_params(tool: &ToolFn, errors: &mut Errors) {
    // Rule: `editable_params` needs `requires_confirmation`.
    // Reason: parameters are edited while a person approves the call; without
    // confirmation nobody is asked, and the list would silently do nothing.
    if let (false, Some(first)) = (
        tool.args.flags.0.requires_confirmation,
        tool.args.editable_params.first(),
    ) {
        errors.spanned(
            first,
            "`editable_params` has no effect without `requires_confirmation`: parameters are edited while a person approves the call; add `requires_confirmation`",
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for lit in &tool.args.editable_params {
        let name = lit.value();
        if seen.contains(&name) {
            errors.spanned(lit, format!("duplicate `{name}`"));
        } else {
            match editable_target(tool, lit) {
                Some(param) if param.role() != Role::Visible => errors.spanned(
                    lit,
                    format!(
                        "`{name}` cannot be editable: it is {}, and only parameters the model sends can be edited",
                        role_phrase(param.role())
                    ),
                ),
                Some(_) => {}
                // Maybe a field of the flattened struct: `Tool::new` checks
                // every editable name against the schema at registration.
                None if tool.has_flattened() => {}
                None => errors.spanned(lit, unknown_param(tool, &name, "editable_params")),
            }
        }
        seen.push(name);
    }
}

/// The parameter an `editable_params` entry names: by model-facing name, else by Rust name.
pub(crate) fn editable_target<'a>(tool: &'a ToolFn, lit: &LitStr) -> Option<&'a crate::ast::Param> {
    let name = lit.value();
    tool.params
        .iter()
        .find(|p| p.name == name)
        .or_else(|| tool.param_by_rust_name(&name))
}

fn role_phrase(role: Role) -> &'static str {
    match role {
        Role::Visible => "model-visible",
        Role::Hidden => "hidden",
        Role::Context => "the context",
        Role::State => "application state",
        Role::Flattened => "a flattened struct (`#[arg(flatten)]`) whose fields are the parameters",
    }
}

// Rule: each `inject_params` rule names a parameter that holds a JSON value
// and has a well-formed dotted key path.
// Reason: the framework fills that parameter from the context at that path;
// a wrong name or path would silently inject nothing. Context and `State<T>`
// parameters are filled by the framework already.
fn check_inject_params(tool: &ToolFn, errors: &mut Errors) {
    for rule in &tool.args.inject_params {
        let name = rule.param.unraw().to_string();
        match tool.param_by_rust_name(&name) {
            None => errors.at(
                rule.param.span(),
                unknown_param_or_field(tool, &name, "inject_params"),
            ),
            Some(param) if param.is_flattened() => errors.at(
                rule.param.span(),
                format!(
                    "`{name}` cannot be injected: it is {}, and a rule fills one JSON value; inject into a parameter of its own",
                    role_phrase(Role::Flattened)
                ),
            ),
            Some(param) if matches!(param.kind, ParamKind::Context(_) | ParamKind::State) => {
                errors.at(
                    rule.param.span(),
                    format!(
                        "`{name}` cannot be injected: it is {}, which the framework fills already",
                        role_phrase(param.role())
                    ),
                );
            }
            Some(_) => {}
        }
        check_key_path(&rule.key, errors);
    }
}

/// A key path: dot-separated segments of letters, digits, `_` or `-` (array indexes are digits).
fn check_key_path(key: &LitStr, errors: &mut Errors) {
    let path = key.value();
    if path.is_empty() {
        errors.spanned(
            key,
            "`key` must not be empty: give the dotted path of a context value, e.g. \"knowledge_config.owner\"",
        );
        return;
    }
    let well_formed = path.split('.').all(|segment| {
        !segment.is_empty()
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    if !well_formed {
        errors.spanned(
            key,
            format!(
                "malformed key path `{path}`: expected names of letters, digits, `_` or `-` separated by single dots, e.g. \"knowledge_config.owner\""
            ),
        );
    }
}

// Rule: each `display` language is a language tag, and its `params(...)` name
// parameters of the fn.
// Reason: UIs look display names up by language tag and by parameter; a
// misspelt one is never shown.
fn check_display(tool: &ToolFn, errors: &mut Errors) {
    for lang in &tool.args.display {
        let tag = lang.lang.unraw().to_string();
        if !names::is_language_tag(&tag) {
            errors.at(
                lang.lang.span(),
                format!("`{tag}` is not a language tag: expected one such as `en`, `zh` or `pt_BR` (`_` stands for `-`)"),
            );
        }
        for (param, _) in &lang.params {
            let name = param.unraw().to_string();
            match display_target(tool, param) {
                Some(target) if target.is_flattened() => errors.at(
                    param.span(),
                    format!(
                        "`{name}` has no display name: it is {}; name a field instead",
                        role_phrase(Role::Flattened)
                    ),
                ),
                Some(_) => {}
                // Maybe a field of the flattened struct: checked against
                // the schema when the tool registers.
                None if tool.has_flattened() => {}
                None => errors.at(param.span(), unknown_param(tool, &name, "display")),
            }
        }
    }
}

/// The parameter a `display(... params(x = ...))` entry names: by Rust name, else by model-facing name.
pub(crate) fn display_target<'a>(tool: &'a ToolFn, ident: &Ident) -> Option<&'a crate::ast::Param> {
    let name = ident.unraw().to_string();
    tool.param_by_rust_name(&name)
        .or_else(|| tool.params.iter().find(|p| p.name == name))
}

// Rule: `url_patterns` are well-formed host or URL patterns: `*.google.com`,
// `www.google.*`, `example.com`, `localhost:8080`, `github.com/*/issues`, or a
// URL such as `https://github.com/**/issues` whose scheme is `http`, `https`
// or `*`. In the host, `*` is a whole label at the start or the end (or the
// whole host); in the path, `*` stays inside a segment and `**` is a whole
// segment.
// Reason: patterns are matched against page URLs at run time
// (`tool_core::UrlPattern`, which parses them with the same grammar,
// `tool_rules::url_pattern`); a malformed one would
// be refused when the tool registers, so it is refused here instead.
fn check_url_patterns(tool: &ToolFn, errors: &mut Errors) {
    for lit in &tool.args.url_patterns {
        let pattern = lit.value();
        if let Err(problem) = url_pattern::parse(&pattern) {
            errors.spanned(lit, format!("invalid URL pattern `{pattern}`: {problem}"));
        }
    }
}

// Rule: each tag matches ^[a-z0-9][a-z0-9_-]{0,31}$ and appears once.
// Reason: tags select tools (`tool --tags fs`, registry views) and feed tool
// search; one spelling per tag (lower-case, no spaces) keeps a selection from
// silently missing a tool, and a repeated tag is a slip that selects nothing
// more. The runtime applies the same rule to `ToolSpec::with_tags`
// (`tool_rules::names`).
fn check_tags(tool: &ToolFn, errors: &mut Errors) {
    let mut seen: Vec<String> = Vec::new();
    for lit in &tool.args.tags {
        let tag = lit.value();
        if tag.is_empty() {
            errors.spanned(
                lit,
                format!(
                    "a tag cannot be empty: write a word such as \"fs\"; {}",
                    names::TAG_RULE
                ),
            );
        } else if let Some(problem) = names::tag_problem(&tag) {
            errors.spanned(
                lit,
                format!("invalid tag `{tag}`: {problem}; {}", names::TAG_RULE),
            );
        } else if seen.contains(&tag) {
            errors.spanned(lit, format!("duplicate tag `{tag}`"));
        } else {
            seen.push(tag);
        }
    }
}

/// [`unknown_param`], saying also, when the tool flattens a struct, that
/// `list` cannot name one of its fields (which the macro cannot see).
/// Reason: the model fills a flattened struct whole; a value the framework
/// supplies goes in a parameter of its own.
fn unknown_param_or_field(tool: &ToolFn, name: &str, list: &str) -> String {
    let mut message = unknown_param(tool, name, list);
    if tool.has_flattened() {
        message.push_str(&format!(
            " (`{list}` cannot name a field of a `#[arg(flatten)]` struct: the model fills the whole struct; take the value as a parameter of its own)"
        ));
    }
    message
}

/// "unknown parameter `x` in `list`; did you mean `y`?" (or the list of parameters).
fn unknown_param(tool: &ToolFn, name: &str, list: &str) -> String {
    let names: Vec<&str> = tool.params.iter().map(|p| p.rust_name.as_str()).collect();
    match did_you_mean(name, names.iter().copied()) {
        Some(close) => format!("unknown parameter `{name}` in `{list}`; did you mean `{close}`?"),
        None if names.is_empty() => {
            format!("unknown parameter `{name}` in `{list}`: the fn has no parameters")
        }
        None => format!(
            "unknown parameter `{name}` in `{list}`; the parameters are {}",
            all_of(&names)
        ),
    }
}
