//! Parsing of `#[tool(...)]` and of the per-parameter `#[arg(...)]`.
//!
//! darling maps each key to a typed field (`#[derive(FromMeta)]` on
//! [`ToolArgs`], [`ArgAttr`], [`InjectRule`] and [`DisplayLang`]); the value
//! parsers given to it with `#[darling(with = ...)]` check the shape of each
//! value (a string here, a list of strings there) with messages that say what
//! to write. In front of darling sits one pass of our own, [`Keys`], so that
//! an unknown key is reported at the key alone with our "did you mean" (from
//! `tool_rules::suggest`) and a second occurrence as "duplicate `key`" at that
//! key: darling would span the whole `key = value` item and word it
//! "Unknown field: ...". Each item is then handed to darling on its own, so a
//! bad value loses only its own key, never its neighbours' (darling's derive
//! returns no partial result on error), and every mistake of one attribute is
//! reported in one compile. Rules that relate a value to the fn (does
//! `hidden_params` name a parameter?) live in `check.rs`.
//!
//! Why one file of this size: it is one concern, the attribute's grammar
//! (keys, value parsers, messages); checks against the fn live in `check.rs`.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Meta, Path, Token};
use tool_rules::ToolFlags;
use tool_rules::suggest::unknown_message;

use crate::errors::Errors;

/// The keys of `#[tool(...)]` other than the flags (which are [`ToolFlags::NAMES`]).
const TOOL_VALUE_KEYS: &[&str] = &[
    "name",
    "crate",
    "kind",
    "timeout",
    "task_support",
    "hidden_params",
    "editable_params",
    "url_patterns",
    "tags",
    "inject_params",
    "display",
];

/// The keys `#[arg(...)]` accepts.
const ARG_KEYS: &[&str] = &["description", "default", "rename", "flatten"];

/// The keys of one `inject_params` rule.
const INJECT_KEYS: &[&str] = &["mode", "key"];

/// The keys of one `display` language.
const DISPLAY_KEYS: &[&str] = &["name", "params"];

/// Every key `#[tool(...)]` accepts.
fn tool_keys() -> Vec<&'static str> {
    let mut keys = TOOL_VALUE_KEYS.to_vec();
    keys.extend(ToolFlags::NAMES);
    keys
}

/// Everything `#[tool(...)]` said, as typed values.
#[derive(Default, FromMeta)]
#[darling(default)]
pub(crate) struct ToolArgs {
    /// `name = "..."`.
    #[darling(with = string)]
    pub(crate) name: Option<LitStr>,
    /// `crate = "..."`, parsed as a path.
    #[darling(rename = "crate", with = crate_path)]
    pub(crate) krate: Option<Path>,
    /// `kind = "..."`.
    #[darling(with = parse_kind)]
    pub(crate) kind: Option<Kind>,
    /// `timeout = "..."`, in milliseconds.
    #[darling(rename = "timeout", with = parse_timeout)]
    pub(crate) timeout_ms: Option<u64>,
    /// `task_support = "..."`: the variant name of `tool_core::TaskSupport`.
    #[darling(with = parse_task_support)]
    pub(crate) task_support: Option<&'static str>,
    /// `hidden_params = [...]` (Rust parameter names).
    #[darling(with = string_list)]
    pub(crate) hidden_params: Vec<LitStr>,
    /// `editable_params = [...]`.
    #[darling(with = string_list)]
    pub(crate) editable_params: Vec<LitStr>,
    /// `url_patterns = [...]`.
    #[darling(with = string_list)]
    pub(crate) url_patterns: Vec<LitStr>,
    /// `tags = [...]`.
    #[darling(with = string_list)]
    pub(crate) tags: Vec<LitStr>,
    /// `inject_params(...)`.
    #[darling(with = parse_inject_params)]
    pub(crate) inject_params: Vec<InjectArg>,
    /// `display(...)`.
    #[darling(with = parse_display)]
    pub(crate) display: Vec<DisplayArg>,
    /// The boolean flags: every key of [`ToolFlags::NAMES`].
    #[darling(flatten)]
    pub(crate) flags: Flags,
}

impl ToolArgs {
    /// Takes every key `other` set (each item is parsed alone, so at most one).
    fn merge(&mut self, other: Self) {
        self.name = self.name.take().or(other.name);
        self.krate = self.krate.take().or(other.krate);
        self.kind = self.kind.or(other.kind);
        self.timeout_ms = self.timeout_ms.or(other.timeout_ms);
        self.task_support = self.task_support.or(other.task_support);
        self.hidden_params.extend(other.hidden_params);
        self.editable_params.extend(other.editable_params);
        self.url_patterns.extend(other.url_patterns);
        self.tags.extend(other.tags);
        self.inject_params.extend(other.inject_params);
        self.display.extend(other.display);
        self.flags.0 = self.flags.0.union(other.flags.0);
    }
}

/// The flags of `#[tool(...)]`: `tool_rules::ToolFlags`, the one declaration
/// shared with the runtime, parsed from the keys darling leaves over.
#[derive(Default, Clone, Copy)]
pub(crate) struct Flags(pub(crate) ToolFlags);

impl FromMeta for Flags {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut flags = ToolFlags::NONE;
        let mut errors = darling::Error::accumulator();
        for item in items {
            let NestedMeta::Meta(meta) = item else {
                errors.push(darling::Error::custom("expected an option name").with_span(item));
                continue;
            };
            let key = darling::util::path_to_string(meta.path());
            if let Some(value) = errors.handle(flag(meta)) {
                if !flags.set(&key, value) {
                    let known = tool_keys();
                    errors.push(
                        darling::Error::custom(unknown_message("attribute", &key, &known))
                            .with_span(meta.path()),
                    );
                }
            }
        }
        errors.finish_with(Self(flags))
    }
}

/// `kind = "..."`: mirrors `tool_core::ToolKind`.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Read,
    Write,
    Exec,
    Network,
    Ask,
    Other,
}

impl Kind {
    /// Attribute spelling and value of every kind.
    const ALL: [(&'static str, Kind); 6] = [
        ("read", Kind::Read),
        ("write", Kind::Write),
        ("exec", Kind::Exec),
        ("network", Kind::Network),
        ("ask", Kind::Ask),
        ("other", Kind::Other),
    ];

    /// The name of the matching `ToolKind` variant.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Kind::Read => "Read",
            Kind::Write => "Write",
            Kind::Exec => "Exec",
            Kind::Network => "Network",
            Kind::Ask => "Ask",
            Kind::Other => "Other",
        }
    }
}

/// `mode = "..."` of an `inject_params` rule: mirrors `InjectMode`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum InjectMode {
    Default,
    Merge,
}

/// One `inject_params` rule: `param(mode = "...", key = "...")`.
#[derive(Clone)]
pub(crate) struct InjectArg {
    /// The parameter it fills.
    pub(crate) param: Ident,
    /// The combination mode (`default` when not given).
    pub(crate) mode: InjectMode,
    /// The dotted key path into the context.
    pub(crate) key: LitStr,
}

/// The keys inside one `inject_params` rule, as darling parses them.
#[derive(Default, FromMeta)]
#[darling(default)]
struct InjectRule {
    /// `mode = "default" | "merge"`.
    #[darling(with = inject_mode)]
    mode: Option<InjectMode>,
    /// `key = "..."`.
    #[darling(with = string)]
    key: Option<LitStr>,
}

impl InjectRule {
    fn merge(&mut self, other: Self) {
        self.mode = self.mode.or(other.mode);
        self.key = self.key.take().or(other.key);
    }
}

/// One language of `display(...)`: `zh(name = "...", params(x = "..."))`.
pub(crate) struct DisplayArg {
    /// The language tag as written (`_` stands for `-`).
    pub(crate) lang: Ident,
    /// The tool's display name.
    pub(crate) name: Option<LitStr>,
    /// Parameter → display name.
    pub(crate) params: Vec<(Ident, LitStr)>,
}

/// The keys inside one `display` language, as darling parses them.
#[derive(Default, FromMeta)]
#[darling(default)]
struct DisplayLang {
    /// `name = "..."`.
    #[darling(with = string)]
    name: Option<LitStr>,
    /// `params(x = "...")`.
    #[darling(with = display_params)]
    params: Vec<(Ident, LitStr)>,
}

impl DisplayLang {
    fn merge(&mut self, other: Self) {
        self.name = self.name.take().or(other.name);
        self.params.extend(other.params);
    }
}

/// Everything the `#[arg(...)]` attributes of one parameter said.
#[derive(Default, FromMeta)]
#[darling(default)]
pub(crate) struct ArgAttr {
    /// Where the first `#[arg]` attribute is (its `arg`), if any.
    #[darling(skip)]
    pub(crate) span: Option<Span>,
    /// `description = "..."`.
    #[darling(with = string)]
    pub(crate) description: Option<LitStr>,
    /// `default` or `default = EXPR`.
    #[darling(with = default_arg)]
    pub(crate) default: Option<DefaultArg>,
    /// `rename = "..."`.
    #[darling(with = string)]
    pub(crate) rename: Option<LitStr>,
    /// `flatten`: the `flatten` key (for spans) when given.
    #[darling(with = flatten_key)]
    pub(crate) flatten: Option<Ident>,
}

impl ArgAttr {
    fn merge(&mut self, other: Self) {
        self.description = self.description.take().or(other.description);
        self.default = self.default.take().or(other.default);
        self.rename = self.rename.take().or(other.rename);
        self.flatten = self.flatten.take().or(other.flatten);
    }
}

/// The two forms of `#[arg(default)]`.
pub(crate) enum DefaultArg {
    /// `default`: `Default::default()`; the `default` key, for spans.
    Trait(Ident),
    /// `default = EXPR`.
    Expr(Box<Expr>),
}

/// Parses the tokens inside `#[tool(...)]`.
pub(crate) fn parse_tool_args(tokens: TokenStream, errors: &mut Errors) -> ToolArgs {
    let metas = parse_metas(tokens, errors);
    let keys = tool_keys();
    parse_each(
        metas,
        &mut Keys::new(&keys),
        ToolArgs::default(),
        ToolArgs::merge,
        errors,
    )
}

/// Parses every `#[arg(...)]` of one parameter; the keys share one set of slots.
pub(crate) fn parse_arg_attrs(attrs: &[Attribute], errors: &mut Errors) -> ArgAttr {
    let mut span = None;
    let mut metas = Vec::new();
    for attr in attrs.iter().filter(|a| is_arg_attr(a)) {
        span.get_or_insert_with(|| attr.path().span());
        let Meta::List(list) = &attr.meta else {
            errors.spanned(
                attr,
                "expected `#[arg(...)]` with `description`, `default`, `rename` or `flatten`",
            );
            continue;
        };
        metas.extend(parse_metas(list.tokens.clone(), errors));
    }
    let mut arg = parse_each(
        metas,
        &mut Keys::new(ARG_KEYS),
        ArgAttr::default(),
        ArgAttr::merge,
        errors,
    );
    arg.span = span;
    arg
}

/// Passes each item through the key pass and hands it to darling on its
/// own, merging what parsed: one bad value costs only its own key, and every
/// error is collected in source order.
fn parse_each<T: FromMeta>(
    metas: Vec<Meta>,
    keys: &mut Keys<'_>,
    mut out: T,
    merge: fn(&mut T, T),
    errors: &mut Errors,
) -> T {
    for meta in metas {
        if keys.accept(&meta, errors).is_none() {
            continue;
        }
        match T::from_list(&[NestedMeta::Meta(meta)]) {
            Ok(one) => merge(&mut out, one),
            Err(e) => errors.push(e.into()),
        }
    }
    out
}

/// Whether `attr` is our parameter marker `#[context]`.
pub(crate) fn is_context_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("context")
}

/// Whether the parameter is marked `#[context]` (filled from the context
/// through `FromToolContext`); a marker with arguments is reported.
pub(crate) fn context_marker(attrs: &[Attribute], errors: &mut Errors) -> bool {
    let mut marked = false;
    for attr in attrs.iter().filter(|a| is_context_attr(a)) {
        if !matches!(attr.meta, Meta::Path(_)) {
            errors.spanned(
                attr,
                "`#[context]` takes no arguments: it marks a parameter the framework fills through `FromToolContext`",
            );
        } else if marked {
            errors.spanned(attr, "duplicate `#[context]`");
        }
        marked = true;
    }
    marked
}

/// Whether `attr` is one of ours, `#[arg(...)]`.
pub(crate) fn is_arg_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("arg")
}

/// The key pass in front of darling: one slot per key.
struct Keys<'k> {
    allowed: &'k [&'static str],
    seen: Vec<String>,
}

impl<'k> Keys<'k> {
    fn new(allowed: &'k [&'static str]) -> Self {
        Self {
            allowed,
            seen: Vec::new(),
        }
    }

    /// Returns the key of `meta` if it is allowed and new; reports an unknown
    /// key (with a "did you mean") or a duplicate at the key otherwise.
    fn accept(&mut self, meta: &Meta, errors: &mut Errors) -> Option<String> {
        let ident = key_ident(meta.path(), errors)?;
        let key = ident.unraw().to_string();
        if !self.allowed.contains(&key.as_str()) {
            errors.at(
                ident.span(),
                unknown_message("attribute", &key, self.allowed),
            );
            return None;
        }
        if self.seen.contains(&key) {
            errors.at(ident.span(), format!("duplicate `{key}`"));
            return None;
        }
        self.seen.push(key.clone());
        Some(key)
    }
}

/// The single identifier a key must be.
fn key_ident(path: &Path, errors: &mut Errors) -> Option<Ident> {
    if let Some(ident) = path.get_ident() {
        return Some(ident.clone());
    }
    errors.spanned(path, "expected a key such as `name`, not a path");
    None
}

/// A darling error spanned over `tokens`.
fn error_at(tokens: &impl quote::ToTokens, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::from(syn::Error::new_spanned(tokens, message))
}

/// The key of `meta` as written (for messages).
fn key_of(meta: &Meta) -> String {
    meta.path().get_ident().map_or_else(
        || darling::util::path_to_string(meta.path()),
        |i| i.unraw().to_string(),
    )
}

/// Parses a comma-separated list of `key`, `key = value` and `key(...)` items.
/// A malformed item is reported and skipped up to the next comma, so the
/// items after it are still parsed and checked.
fn parse_metas(tokens: TokenStream, errors: &mut Errors) -> Vec<Meta> {
    let parser = |input: ParseStream<'_>| {
        let mut metas = Vec::new();
        while !input.is_empty() {
            if !input.peek(Ident::peek_any) {
                let found: TokenTree = input.parse()?;
                errors.spanned(
                    &found,
                    "expected an option name: `key`, `key = value` or `key(...)`, e.g. `name = \"search\"`",
                );
                skip_to_comma(input)?;
            } else {
                match input.parse::<Meta>() {
                    Ok(meta) => metas.push(meta),
                    Err(e) => {
                        errors.push(e);
                        skip_to_comma(input)?;
                    }
                }
            }
            if input.is_empty() {
                break;
            }
            if let Err(e) = input.parse::<Token![,]>() {
                errors.push(e);
                skip_to_comma(input)?;
                let _: Option<Token![,]> = input.parse()?;
            }
        }
        Ok(metas)
    };
    match parser.parse2(tokens) {
        Ok(metas) => metas,
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    }
}

/// Skips tokens up to (not including) the next top-level comma.
fn skip_to_comma(input: ParseStream<'_>) -> syn::Result<()> {
    while !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// Looks through the invisible groups that `macro_rules!` wraps around `$e:expr`.
fn ungroup(mut expr: &Expr) -> &Expr {
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

/// The value of `key = "..."`.
fn string(meta: &Meta) -> darling::Result<Option<LitStr>> {
    let key = key_of(meta);
    let Meta::NameValue(nv) = meta else {
        return Err(error_at(meta, format!("expected `{key} = \"...\"`")));
    };
    match ungroup(&nv.value) {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(Some(s.clone())),
        other => Err(error_at(
            other,
            format!("expected a string literal: `{key} = \"...\"`"),
        )),
    }
}

/// The strings of `key = ["...", "..."]`.
fn string_list(meta: &Meta) -> darling::Result<Vec<LitStr>> {
    let key = key_of(meta);
    let Meta::NameValue(nv) = meta else {
        return Err(error_at(meta, format!("expected `{key} = [\"...\"]`")));
    };
    let Expr::Array(array) = ungroup(&nv.value) else {
        return Err(error_at(
            &nv.value,
            format!("expected a list of strings: `{key} = [\"...\"]`"),
        ));
    };
    let mut errors = darling::Error::accumulator();
    let mut out = Vec::new();
    for elem in &array.elems {
        match ungroup(elem) {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => out.push(s.clone()),
            other => errors.push(error_at(other, "expected a string literal")),
        }
    }
    errors.finish_with(out)
}

/// A flag: `key`, or `key = true` / `key = false`.
fn flag(meta: &Meta) -> darling::Result<bool> {
    let key = key_of(meta);
    let message = format!("`{key}` is a flag: write `{key}` or `{key} = true`");
    match meta {
        Meta::Path(_) => Ok(true),
        Meta::NameValue(nv) => match ungroup(&nv.value) {
            Expr::Lit(ExprLit {
                lit: Lit::Bool(b), ..
            }) => Ok(b.value),
            other => Err(error_at(other, message)),
        },
        Meta::List(list) => Err(error_at(list, message)),
    }
}

/// The items of `key(...)`, parsed with recovery (errors into `errors`).
fn nested(meta: &Meta, example: &str, errors: &mut Errors) -> Vec<Meta> {
    match meta {
        Meta::List(list) => parse_metas(list.tokens.clone(), errors),
        _ => {
            let key = key_of(meta);
            errors.spanned(meta, format!("expected `{key}(...)`, e.g. `{example}`"));
            Vec::new()
        }
    }
}

/// `crate = "path"`: the path through which generated code reaches `__private`.
fn crate_path(meta: &Meta) -> darling::Result<Option<Path>> {
    let Some(lit) = string(meta)? else {
        return Ok(None);
    };
    match lit.parse_with(Path::parse_mod_style) {
        Ok(path) => Ok(Some(path)),
        Err(_) => Err(error_at(
            &lit,
            format!(
                "`crate` must be the path of the tool_core crate, such as \"my_tools\" or \"::my_tools\"; `{}` is not a path",
                lit.value()
            ),
        )),
    }
}

/// `kind = "..."`: one of the `ToolKind` names.
fn parse_kind(meta: &Meta) -> darling::Result<Option<Kind>> {
    let Some(lit) = string(meta)? else {
        return Ok(None);
    };
    let value = lit.value();
    if let Some((_, kind)) = Kind::ALL.iter().find(|(name, _)| *name == value) {
        return Ok(Some(*kind));
    }
    let names: Vec<&str> = Kind::ALL.iter().map(|(name, _)| *name).collect();
    Err(error_at(&lit, unknown_message("kind", &value, &names)))
}

/// `task_support = "..."`: `forbidden`, `optional` or `required`; the
/// variant name of `tool_core::TaskSupport`.
fn parse_task_support(meta: &Meta) -> darling::Result<Option<&'static str>> {
    const ALL: [(&str, &str); 3] = [
        ("forbidden", "Forbidden"),
        ("optional", "Optional"),
        ("required", "Required"),
    ];
    let Some(lit) = string(meta)? else {
        return Ok(None);
    };
    let value = lit.value();
    if let Some((_, variant)) = ALL.iter().find(|(name, _)| *name == value) {
        return Ok(Some(variant));
    }
    let names: Vec<&str> = ALL.iter().map(|(name, _)| *name).collect();
    Err(error_at(
        &lit,
        unknown_message("task_support", &value, &names),
    ))
}

/// `timeout = "..."`: a positive whole number and a unit (`ms`, `s`, `m`, `h`), in milliseconds.
fn parse_timeout(meta: &Meta) -> darling::Result<Option<u64>> {
    let Some(lit) = string(meta)? else {
        return Ok(None);
    };
    let text = lit.value();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let factor: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => 0,
    };
    let millis = number
        .parse::<u64>()
        .ok()
        .filter(|_| factor > 0)
        .map(|n| n.checked_mul(factor));
    let problem = match millis {
        Some(Some(0)) => "a timeout must be greater than zero",
        Some(Some(ms)) => return Ok(Some(ms)),
        Some(None) => "too large",
        None => "expected a whole number followed by `ms`, `s`, `m` or `h`, e.g. \"30s\"",
    };
    Err(error_at(
        &lit,
        format!("invalid timeout `{text}`: {problem}"),
    ))
}

/// Runs a parser that reports into [`Errors`] (for the nested lists, whose
/// items need the same recovery and key pass as the top level) and turns
/// what it collected into one darling error.
fn with_errors<T>(run: impl FnOnce(&mut Errors) -> T) -> darling::Result<T> {
    let mut errors = Errors::default();
    let value = run(&mut errors);
    match errors.into_error() {
        Some(e) => Err(e.into()),
        None => Ok(value),
    }
}

/// `inject_params(param(mode = "...", key = "..."), ...)`.
fn parse_inject_params(meta: &Meta) -> darling::Result<Vec<InjectArg>> {
    const EXAMPLE: &str = "inject_params(owner(mode = \"default\", key = \"config.owner\"))";
    with_errors(|errors| {
        let mut rules: Vec<InjectArg> = Vec::new();
        for item in nested(meta, EXAMPLE, errors) {
            let Meta::List(list) = &item else {
                errors.spanned(
                    &item,
                    format!(
                        "expected `parameter(mode = \"...\", key = \"...\")`, e.g. `{EXAMPLE}`"
                    ),
                );
                continue;
            };
            let Some(param) = key_ident(&list.path, errors) else {
                continue;
            };
            if rules.iter().any(|r| r.param == param) {
                errors.at(param.span(), format!("duplicate `{}`", param.unraw()));
                continue;
            }
            let mut keys = Keys::new(INJECT_KEYS);
            let inner = parse_metas(list.tokens.clone(), errors);
            let rule = parse_each(
                inner,
                &mut keys,
                InjectRule::default(),
                InjectRule::merge,
                errors,
            );
            if rule.key.is_none() && !keys.seen.iter().any(|k| k == "key") {
                let name = param.unraw();
                errors.at(
                    param.span(),
                    format!(
                        "`{name}` needs a key path into the context: `{name}(mode = \"default\", key = \"config.{name}\")`"
                    ),
                );
            }
            let mode_ok = rule.mode.is_some() || !keys.seen.iter().any(|k| k == "mode");
            if let (true, Some(key)) = (mode_ok, rule.key) {
                let mode = rule.mode.unwrap_or(InjectMode::Default);
                rules.push(InjectArg { param, mode, key });
            }
        }
        rules
    })
}

/// `mode = "default" | "merge"`.
fn inject_mode(meta: &Meta) -> darling::Result<Option<InjectMode>> {
    let Some(lit) = string(meta)? else {
        return Ok(None);
    };
    match lit.value().as_str() {
        "default" => Ok(Some(InjectMode::Default)),
        "merge" => Ok(Some(InjectMode::Merge)),
        other => Err(error_at(
            &lit,
            match tool_rules::suggest::did_you_mean(other, ["default", "merge"]) {
                Some(close) => format!("unknown mode `{other}`; did you mean `{close}`?"),
                None => format!("unknown mode `{other}`; expected \"default\" | \"merge\""),
            },
        )),
    }
}

/// `display(zh(name = "...", params(x = "...")), en(...))`.
fn parse_display(meta: &Meta) -> darling::Result<Vec<DisplayArg>> {
    const EXAMPLE: &str = "display(zh(name = \"搜索\", params(query = \"关键词\")))";
    with_errors(|errors| {
        let mut langs: Vec<DisplayArg> = Vec::new();
        for item in nested(meta, EXAMPLE, errors) {
            let Meta::List(list) = &item else {
                errors.spanned(
                    &item,
                    format!("expected `lang(name = \"...\", params(...))`, e.g. `{EXAMPLE}`"),
                );
                continue;
            };
            let Some(lang) = key_ident(&list.path, errors) else {
                continue;
            };
            if langs.iter().any(|l| l.lang == lang) {
                errors.at(lang.span(), format!("duplicate `{lang}`"));
                continue;
            }
            let mut keys = Keys::new(DISPLAY_KEYS);
            let inner = parse_metas(list.tokens.clone(), errors);
            let parsed = parse_each(
                inner,
                &mut keys,
                DisplayLang::default(),
                DisplayLang::merge,
                errors,
            );
            langs.push(DisplayArg {
                lang,
                name: parsed.name,
                params: parsed.params,
            });
        }
        langs
    })
}

/// `params(x = "...", y = "...")` of one display language.
fn display_params(meta: &Meta) -> darling::Result<Vec<(Ident, LitStr)>> {
    with_errors(|errors| {
        let mut out: Vec<(Ident, LitStr)> = Vec::new();
        for item in nested(meta, "params(query = \"关键词\")", errors) {
            let Some(param) = key_ident(item.path(), errors) else {
                continue;
            };
            if out.iter().any(|(p, _)| *p == param) {
                errors.at(param.span(), format!("duplicate `{}`", param.unraw()));
                continue;
            }
            match string(&item) {
                Ok(Some(label)) => out.push((param, label)),
                Ok(None) => {}
                Err(e) => errors.push(e.into()),
            }
        }
        out
    })
}

/// `flatten` (or `flatten = true`): the key; `flatten = false` is `None`.
fn flatten_key(meta: &Meta) -> darling::Result<Option<Ident>> {
    if !flag(meta)? {
        return Ok(None);
    }
    Ok(meta.path().get_ident().cloned())
}

/// `default` or `default = EXPR`.
fn default_arg(meta: &Meta) -> darling::Result<Option<DefaultArg>> {
    match meta {
        Meta::Path(path) => Ok(path.get_ident().cloned().map(DefaultArg::Trait)),
        Meta::NameValue(nv) => Ok(Some(DefaultArg::Expr(Box::new(nv.value.clone())))),
        Meta::List(list) => Err(error_at(list, "expected `default` or `default = EXPR`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(tokens: TokenStream) -> (ToolArgs, String) {
        let mut errors = Errors::default();
        let args = parse_tool_args(tokens, &mut errors);
        let text = errors
            .into_error()
            .map(|e| {
                e.into_iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .unwrap_or_default();
        (args, text)
    }

    #[test]
    fn every_listed_key_reaches_darling() {
        // A key in the list that darling did not know would surface as
        // darling's own "Unknown field" error: the two lists must agree.
        let (args, errors) = parse(quote!(
            name = "n",
            crate = "c",
            kind = "read",
            timeout = "1s",
            hidden_params = ["a"],
            editable_params = ["b"],
            url_patterns = ["x.com"],
            inject_params(a(key = "k")),
            display(zh(name = "z")),
            read_only,
            destructive,
            idempotent,
            open_world = true,
            concurrency_safe,
            requires_confirmation,
            strict
        ));
        assert_eq!(errors, "");
        assert_eq!(args.name.map(|n| n.value()).as_deref(), Some("n"));
        assert_eq!(args.timeout_ms, Some(1000));
        assert_eq!(args.inject_params.len(), 1);
        assert_eq!(args.display.len(), 1);
        let all = ToolFlags {
            read_only: true,
            destructive: true,
            idempotent: true,
            open_world: true,
            concurrency_safe: true,
            requires_confirmation: true,
            strict: true,
        };
        assert_eq!(args.flags.0, all);
    }

    #[test]
    fn a_bad_value_costs_only_its_own_key() {
        let (args, errors) = parse(quote!(kind = "fetch", name = "ok", readonly, name = "x"));
        assert_eq!(
            errors,
            "unknown kind `fetch`; expected one of `read`, `write`, `exec`, `network`, `ask` or `other` \
             | unknown attribute `readonly`; did you mean `read_only`? | duplicate `name`"
        );
        assert_eq!(args.name.map(|n| n.value()).as_deref(), Some("ok"));
    }
}
