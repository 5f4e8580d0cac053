//! The static description of a `#[tool]` fn: what the macro builds in a
//! `const` and submits to `inventory` ([`StaticTool`], its parameters and
//! options). Only `&'static` data and fn pointers, so it can live in a
//! static; the registry ([`Tool::from_static`](crate::tool::Tool::from_static))
//! turns it into a [`Tool`](crate::tool::Tool). Generated code reaches these
//! types through `tool_core::__private`; they are not public API.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::args::schema::ArgLayout;
use crate::result::ToolResult;
use crate::tool::context::ToolContext;
use crate::tool::future::BoxFuture;
use crate::tool::spec::ToolKind;
use tool_rules::ToolFlags;

/// Builds the JSON Schema of one parameter type with the registry's generator
/// (`$ref`s land in the generator's definitions).
pub type SchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// One `#[tool]` fn, as submitted to `inventory`. Only `&'static` data and fn pointers.
#[derive(Debug)]
pub struct StaticTool {
    /// Tool name (validated by the macro).
    pub name: &'static str,
    /// Raw doc text: the `#[doc]` attributes joined with `\n` (one leading
    /// space stripped from literal lines; `include_str!` content as is).
    pub doc: &'static str,
    /// `file!()` of the fn.
    pub file: &'static str,
    /// `line!()` of the fn.
    pub line: u32,
    /// `module_path!()` of the fn (`tool_builtins::read`): its crate is the
    /// first segment, which [`ToolRegistry::of_crate`](crate::ToolRegistry::of_crate) selects by.
    pub module_path: &'static str,
    /// Every parameter in declaration order (hidden ones included).
    pub params: &'static [StaticParam],
    /// The attribute's options.
    pub options: StaticOptions,
    /// The call shim: extracts the arguments through [`Invocation`], calls the fn, converts its return.
    pub call: fn(Invocation) -> BoxFuture<ToolResult>,
    /// Schema of the structured type the fn returns (`Serialize` returns), if it has one.
    pub output_schema: Option<fn(&mut schemars::SchemaGenerator) -> Option<schemars::Schema>>,
}

inventory::collect!(StaticTool);

/// How a parameter gets its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamRole {
    /// In the schema; the model sends it.
    Visible,
    /// Hidden; filled from the context value of the same name, then the inject rule, then the default.
    Hidden,
    /// `&ToolContext`, `ToolContext` or `Option<&ToolContext>`: receives the context.
    Context,
    /// `State<T>`: receives typed state from the context.
    State,
    /// `#[arg(flatten)]`: a struct whose fields are top-level parameters in
    /// the schema; the model sends them, the struct is deserialised from them.
    Flattened,
}

/// How an `inject_params` rule combines the framework's value with the model's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectMode {
    /// Fill when the model omitted the parameter or sent `null`.
    Default,
    /// Maps: model keys plus framework keys (framework wins). Lists: framework
    /// items, then the model's items not already present.
    Merge,
}

/// One `inject_params` rule.
#[derive(Debug, Clone, Copy)]
pub struct StaticInject {
    /// Combination mode.
    pub mode: InjectMode,
    /// Dotted key path into the context (`knowledge_config.default_tags`).
    pub key: &'static str,
}

/// One parameter of a `#[tool]` fn.
#[derive(Debug, Clone, Copy)]
pub struct StaticParam {
    /// Model-facing name (after `#[arg(rename)]`).
    pub name: &'static str,
    /// The Rust identifier.
    pub rust_name: &'static str,
    /// The Rust type as written (for error messages).
    pub rust_type: &'static str,
    /// [`std::any::type_name`] of the type when it is written with the type
    /// parameters of its `#[toolset]` impl block (`W<T>`), so messages show
    /// the concrete type (`W<u32>`); `None` otherwise (the written name,
    /// aliases kept, is shown).
    pub concrete_type: Option<fn() -> &'static str>,
    /// `#[arg(description)]`, else the parameter's own `///` doc, else `None`
    /// (then the fn doc's argument section is used).
    pub description: Option<&'static str>,
    /// How the value is supplied.
    pub role: ParamRole,
    /// `Option<T>` or has a default: not in `required`, absent is fine.
    pub optional: bool,
    /// Schema of the type (visible parameters only); for a flattened one,
    /// the struct's object schema itself (never a `$ref`).
    pub schema: Option<SchemaFn>,
    /// JSON of `#[arg(default = EXPR)]`, shown as the schema's `default`.
    pub default: Option<fn() -> Value>,
    /// The parameter's `inject_params` rule.
    pub inject: Option<StaticInject>,
}

impl StaticParam {
    /// The type as messages show it: [`concrete_type`](Self::concrete_type)
    /// with its paths cut to their last segment (`W<u32>`), else
    /// [`rust_type`](Self::rust_type).
    pub fn shown_type(&self) -> Cow<'static, str> {
        match self.concrete_type {
            Some(name) => Cow::Owned(short_type_name(name())),
            None => Cow::Borrowed(self.rust_type),
        }
    }
}

/// A [`std::any::type_name`] with every path cut to its last segment:
/// `alloc::vec::Vec<my_crate::Item<u32>>` is `Vec<Item<u32>>`.
fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    let mut chars = full.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            segment.clear();
        } else if c.is_alphanumeric() || c == '_' {
            segment.push(c);
        } else {
            out.push_str(&segment);
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(&segment);
    out
}

/// The `#[tool(...)]` options, as parsed and validated by the macro.
#[derive(Debug, Clone, Copy)]
pub struct StaticOptions {
    /// `kind = "..."`.
    pub kind: ToolKind,
    /// The flags (`read_only`, `destructive`, ...), one literal.
    pub flags: ToolFlags,
    /// `tags = [...]`.
    pub tags: &'static [&'static str],
    /// `editable_params = [...]` (model-facing names).
    pub editable_params: &'static [&'static str],
    /// `url_patterns = [...]`.
    pub url_patterns: &'static [&'static str],
    /// `display(...)`.
    pub display: &'static [StaticDisplay],
    /// `timeout = "..."` in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `task_support = "..."`.
    pub task_support: crate::tool::spec::TaskSupport,
}

/// One language of `display(...)`.
#[derive(Debug, Clone, Copy)]
pub struct StaticDisplay {
    /// Language tag, e.g. `zh`.
    pub lang: &'static str,
    /// `name = "..."`.
    pub name: Option<&'static str>,
    /// `params(x = "...")`: (parameter name, display name).
    pub params: &'static [(&'static str, &'static str)],
}

/// The state of one call while the shim extracts its arguments. The
/// pipeline has already dropped what the model sent for hidden parameters
/// (`execute`'s strip-hidden stage), so what is left is the model's. Its
/// methods, the per-parameter decode, are in `args/decode.rs`.
pub struct Invocation {
    pub(crate) def: &'static StaticTool,
    pub(crate) layout: Arc<ArgLayout>,
    pub(crate) args: Map<String, Value>,
    pub(crate) ctx: ToolContext,
    pub(crate) receiver: Option<Arc<dyn Any + Send + Sync>>,
    /// Set for an argument check: `finish` raises the flag and ends the shim
    /// before the fn is called.
    pub(crate) checked: Option<Arc<std::sync::atomic::AtomicBool>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_lose_their_paths() {
        assert_eq!(
            short_type_name(std::any::type_name::<
                Vec<Option<std::collections::HashMap<String, &str>>>,
            >()),
            "Vec<Option<HashMap<String, &str>>>"
        );
        assert_eq!(short_type_name("my_crate::m::Item<u32>"), "Item<u32>");
        assert_eq!(short_type_name("(u8, [a::B; 2])"), "(u8, [B; 2])");
    }
}
