//! Parsing of `#[tool(...)]` and of the per-parameter `#[arg(...)]`.
//!
//! This layer turns tokens into typed values. It checks the shape of each key
//! (a string here, a list of strings there), keeps one slot per key (a second
//! occurrence is "duplicate `key`" at that key) and rejects an unknown key at
//! the key alone, with a "did you mean" when a known key is close. Rules that
//! relate a value to the fn (does `hidden_params` name a parameter?) live in
//! `check.rs`.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Meta, Path, Token};

use crate::errors::Errors;

/// The keys `#[tool(...)]` accepts.
const TOOL_KEYS: &[&str] = &[
    "name",
    "crate",
    "kind",
    "timeout",
    "hidden_params",
    "editable_params",
    "url_patterns",
    "inject_params",
    "display",
    "requires_confirmation",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "concurrency_safe",
    "strict",
];

/// The keys `#[arg(...)]` accepts.
const ARG_KEYS: &[&str] = &["description", "default", "rename"];

/// The keys of one `inject_params` rule.
const INJECT_KEYS: &[&str] = &["mode", "key"];

/// The keys of one `display` language.
const DISPLAY_KEYS: &[&str] = &["name", "params"];

/// Everything `#[tool(...)]` said, as typed values.
#[derive(Default)]
pub(crate) struct ToolArgs {
    /// `name = "..."`.
    pub(crate) name: Option<LitStr>,
    /// `crate = "..."`, parsed as a path.
    pub(crate) krate: Option<Path>,
    /// `kind = "..."`.
    pub(crate) kind: Option<Kind>,
    /// `timeout = "..."`, in milliseconds.
    pub(crate) timeout_ms: Option<u64>,
    /// `hidden_params = [...]` (Rust parameter names).
    pub(crate) hidden_params: Vec<LitStr>,
    /// `editable_params = [...]`.
    pub(crate) editable_params: Vec<LitStr>,
    /// `url_patterns = [...]`.
    pub(crate) url_patterns: Vec<LitStr>,
    /// `inject_params(...)`.
    pub(crate) inject_params: Vec<InjectArg>,
    /// `display(...)`.
    pub(crate) display: Vec<DisplayArg>,
    /// The boolean flags.
    pub(crate) flags: Flags,
}

/// The boolean flags of `#[tool(...)]`, all `false` unless given.
#[derive(Default, Clone, Copy)]
pub(crate) struct Flags {
    pub(crate) requires_confirmation: bool,
    pub(crate) read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    pub(crate) concurrency_safe: bool,
    pub(crate) strict: bool,
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

/// One language of `display(...)`: `zh(name = "...", params(x = "..."))`.
pub(crate) struct DisplayArg {
    /// The language tag as written (`_` stands for `-`).
    pub(crate) lang: Ident,
    /// The tool's display name.
    pub(crate) name: Option<LitStr>,
    /// Parameter → display name.
    pub(crate) params: Vec<(Ident, LitStr)>,
}

/// Everything the `#[arg(...)]` attributes of one parameter said.
#[derive(Default)]
pub(crate) struct ArgAttr {
    /// Where the first `#[arg]` attribute is (its `arg`), if any.
    pub(crate) span: Option<Span>,
    /// `description = "..."`.
    pub(crate) description: Option<LitStr>,
    /// `default` or `default = EXPR`.
    pub(crate) default: Option<DefaultArg>,
    /// `rename = "..."`.
    pub(crate) rename: Option<LitStr>,
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
    let mut args = ToolArgs::default();
    let mut keys = Keys::new(TOOL_KEYS);
    for meta in &parse_metas(tokens, errors) {
        let Some(key) = keys.accept(meta, errors) else {
            continue;
        };
        let flags = &mut args.flags;
        match key.as_str() {
            "name" => args.name = string(meta, &key, errors),
            "crate" => args.krate = string(meta, &key, errors).and_then(|s| crate_path(&s, errors)),
            "kind" => args.kind = string(meta, &key, errors).and_then(|s| kind(&s, errors)),
            "timeout" => {
                args.timeout_ms = string(meta, &key, errors).and_then(|s| timeout_ms(&s, errors));
            }
            "hidden_params" => args.hidden_params = string_list(meta, &key, errors),
            "editable_params" => args.editable_params = string_list(meta, &key, errors),
            "url_patterns" => args.url_patterns = string_list(meta, &key, errors),
            "inject_params" => args.inject_params = inject_params(meta, &key, errors),
            "display" => args.display = display(meta, &key, errors),
            "requires_confirmation" => flags.requires_confirmation = flag(meta, &key, errors),
            "read_only" => flags.read_only = flag(meta, &key, errors),
            "destructive" => flags.destructive = flag(meta, &key, errors),
            "idempotent" => flags.idempotent = flag(meta, &key, errors),
            "open_world" => flags.open_world = flag(meta, &key, errors),
            "concurrency_safe" => flags.concurrency_safe = flag(meta, &key, errors),
            "strict" => flags.strict = flag(meta, &key, errors),
            _ => unreachable!("every key of TOOL_KEYS is handled"),
        }
    }
    args
}

/// Parses every `#[arg(...)]` of one parameter; the keys share one set of slots.
pub(crate) fn parse_arg_attrs(attrs: &[Attribute], errors: &mut Errors) -> ArgAttr {
    let mut arg = ArgAttr::default();
    let mut keys = Keys::new(ARG_KEYS);
    for attr in attrs.iter().filter(|a| is_arg_attr(a)) {
        arg.span.get_or_insert_with(|| attr.path().span());
        let Meta::List(list) = &attr.meta else {
            errors.spanned(
                attr,
                "expected `#[arg(...)]` with `description`, `default` or `rename`",
            );
            continue;
        };
        for meta in &parse_metas(list.tokens.clone(), errors) {
            let Some(key) = keys.accept(meta, errors) else {
                continue;
            };
            match key.as_str() {
                "description" => arg.description = string(meta, &key, errors),
                "rename" => arg.rename = string(meta, &key, errors),
                "default" => arg.default = default_arg(meta, errors),
                _ => unreachable!("every key of ARG_KEYS is handled"),
            }
        }
    }
    arg
}

/// Whether `attr` is one of ours, `#[arg(...)]`.
pub(crate) fn is_arg_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("arg")
}

/// The key of `meta` when it is known and seen for the first time.
struct Keys {
    allowed: &'static [&'static str],
    seen: Vec<String>,
}

impl Keys {
    fn new(allowed: &'static [&'static str]) -> Self {
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

/// "unknown attribute `x`; did you mean `y`?" or, with nothing close, the list of valid keys.
pub(crate) fn unknown_message(what: &str, word: &str, candidates: &[&str]) -> String {
    match did_you_mean(word, candidates.iter().copied()) {
        Some(close) => format!("unknown {what} `{word}`; did you mean `{close}`?"),
        None => format!(
            "unknown {what} `{word}`; expected one of {}",
            one_of(candidates)
        ),
    }
}

/// `` `a`, `b` or `c` ``.
pub(crate) fn one_of(candidates: &[&str]) -> String {
    let quoted: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// The candidate closest to `word`, if close enough to be a likely typo:
/// at most one edit per three characters (and at least one).
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&word, &c.to_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Edit distance over chars counting insertions, deletions, substitutions and
/// swaps of two adjacent chars as one edit each (optimal string alignment):
/// `subjcet` is one edit from `subject`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j]: distance between a[..i] and b[..j].
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
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
fn string(meta: &Meta, key: &str, errors: &mut Errors) -> Option<LitStr> {
    let Meta::NameValue(nv) = meta else {
        errors.spanned(meta, format!("expected `{key} = \"...\"`"));
        return None;
    };
    match ungroup(&nv.value) {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        other => {
            errors.spanned(
                other,
                format!("expected a string literal: `{key} = \"...\"`"),
            );
            None
        }
    }
}

/// The strings of `key = ["...", "..."]`.
fn string_list(meta: &Meta, key: &str, errors: &mut Errors) -> Vec<LitStr> {
    let Meta::NameValue(nv) = meta else {
        errors.spanned(meta, format!("expected `{key} = [\"...\"]`"));
        return Vec::new();
    };
    let Expr::Array(array) = ungroup(&nv.value) else {
        errors.spanned(
            &nv.value,
            format!("expected a list of strings: `{key} = [\"...\"]`"),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for elem in &array.elems {
        match ungroup(elem) {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => out.push(s.clone()),
            other => errors.spanned(other, "expected a string literal"),
        }
    }
    out
}

/// A flag: `key`, or `key = true` / `key = false`.
fn flag(meta: &Meta, key: &str, errors: &mut Errors) -> bool {
    match meta {
        Meta::Path(_) => true,
        Meta::NameValue(nv) => match ungroup(&nv.value) {
            Expr::Lit(ExprLit {
                lit: Lit::Bool(b), ..
            }) => b.value,
            other => {
                errors.spanned(
                    other,
                    format!("`{key}` is a flag: write `{key}` or `{key} = true`"),
                );
                false
            }
        },
        Meta::List(list) => {
            errors.spanned(
                list,
                format!("`{key}` is a flag: write `{key}` or `{key} = true`"),
            );
            false
        }
    }
}

/// The items of `key(...)`.
fn nested(meta: &Meta, key: &str, example: &str, errors: &mut Errors) -> Vec<Meta> {
    match meta {
        Meta::List(list) => parse_metas(list.tokens.clone(), errors),
        _ => {
            errors.spanned(meta, format!("expected `{key}(...)`, e.g. `{example}`"));
            Vec::new()
        }
    }
}

/// `crate = "path"`: the path through which generated code reaches `__private`.
fn crate_path(lit: &LitStr, errors: &mut Errors) -> Option<Path> {
    match lit.parse_with(Path::parse_mod_style) {
        Ok(path) => Some(path),
        Err(_) => {
            errors.spanned(
                lit,
                format!(
                    "`crate` must be the path of the tool_core crate, such as \"my_tools\" or \"::my_tools\"; `{}` is not a path",
                    lit.value()
                ),
            );
            None
        }
    }
}

/// `kind = "..."`: one of the `ToolKind` names.
fn kind(lit: &LitStr, errors: &mut Errors) -> Option<Kind> {
    let value = lit.value();
    if let Some((_, kind)) = Kind::ALL.iter().find(|(name, _)| *name == value) {
        return Some(*kind);
    }
    let names: Vec<&str> = Kind::ALL.iter().map(|(name, _)| *name).collect();
    errors.spanned(lit, unknown_message("kind", &value, &names));
    None
}

/// `timeout = "..."`: a positive whole number and a unit (`ms`, `s`, `m`, `h`), in milliseconds.
fn timeout_ms(lit: &LitStr, errors: &mut Errors) -> Option<u64> {
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
    match millis {
        Some(Some(0)) => errors.spanned(
            lit,
            format!("invalid timeout `{text}`: a timeout must be greater than zero"),
        ),
        Some(Some(ms)) => return Some(ms),
        Some(None) => errors.spanned(lit, format!("invalid timeout `{text}`: too large")),
        None => errors.spanned(
            lit,
            format!(
                "invalid timeout `{text}`: expected a whole number followed by `ms`, `s`, `m` or `h`, e.g. \"30s\""
            ),
        ),
    }
    None
}

/// `inject_params(param(mode = "...", key = "..."), ...)`.
fn inject_params(meta: &Meta, key: &str, errors: &mut Errors) -> Vec<InjectArg> {
    const EXAMPLE: &str = "inject_params(owner(mode = \"default\", key = \"config.owner\"))";
    let mut rules: Vec<InjectArg> = Vec::new();
    for item in nested(meta, key, EXAMPLE, errors) {
        let Meta::List(list) = &item else {
            errors.spanned(
                &item,
                format!("expected `parameter(mode = \"...\", key = \"...\")`, e.g. `{EXAMPLE}`"),
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
        let mut mode = Some(InjectMode::Default);
        let mut path = None;
        for inner in parse_metas(list.tokens.clone(), errors) {
            match keys.accept(&inner, errors).as_deref() {
                Some("mode") => {
                    mode = string(&inner, "mode", errors).and_then(|s| inject_mode(&s, errors));
                }
                Some("key") => path = string(&inner, "key", errors),
                _ => {}
            }
        }
        if path.is_none() && !keys.seen.iter().any(|k| k == "key") {
            errors.at(
                param.span(),
                format!(
                    "`{}` needs a key path into the context: `{}(mode = \"default\", key = \"config.{}\")`",
                    param.unraw(),
                    param.unraw(),
                    param.unraw()
                ),
            );
        }
        if let (Some(mode), Some(key)) = (mode, path) {
            rules.push(InjectArg { param, mode, key });
        }
    }
    rules
}

/// `mode = "default" | "merge"`.
fn inject_mode(lit: &LitStr, errors: &mut Errors) -> Option<InjectMode> {
    match lit.value().as_str() {
        "default" => Some(InjectMode::Default),
        "merge" => Some(InjectMode::Merge),
        other => {
            errors.spanned(
                lit,
                format!("unknown mode `{other}`; expected \"default\" | \"merge\""),
            );
            None
        }
    }
}

/// `display(zh(name = "...", params(x = "...")), en(...))`.
fn display(meta: &Meta, key: &str, errors: &mut Errors) -> Vec<DisplayArg> {
    const EXAMPLE: &str = "display(zh(name = \"搜索\", params(query = \"关键词\")))";
    let mut langs: Vec<DisplayArg> = Vec::new();
    for item in nested(meta, key, EXAMPLE, errors) {
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
        let mut entry = DisplayArg {
            lang,
            name: None,
            params: Vec::new(),
        };
        let mut keys = Keys::new(DISPLAY_KEYS);
        for inner in parse_metas(list.tokens.clone(), errors) {
            match keys.accept(&inner, errors).as_deref() {
                Some("name") => entry.name = string(&inner, "name", errors),
                Some("params") => entry.params = display_params(&inner, errors),
                _ => {}
            }
        }
        langs.push(entry);
    }
    langs
}

/// `params(x = "...", y = "...")` of one display language.
fn display_params(meta: &Meta, errors: &mut Errors) -> Vec<(Ident, LitStr)> {
    let mut out: Vec<(Ident, LitStr)> = Vec::new();
    for item in nested(meta, "params", "params(query = \"关键词\")", errors) {
        let Some(param) = key_ident(item.path(), errors) else {
            continue;
        };
        if out.iter().any(|(p, _)| *p == param) {
            errors.at(param.span(), format!("duplicate `{}`", param.unraw()));
            continue;
        }
        if let Some(label) = string(&item, &param.unraw().to_string(), errors) {
            out.push((param, label));
        }
    }
    out
}

/// `default` or `default = EXPR`.
fn default_arg(meta: &Meta, errors: &mut Errors) -> Option<DefaultArg> {
    match meta {
        Meta::Path(path) => path.get_ident().cloned().map(DefaultArg::Trait),
        Meta::NameValue(nv) => Some(DefaultArg::Expr(Box::new(nv.value.clone()))),
        Meta::List(list) => {
            errors.spanned(list, "expected `default` or `default = EXPR`");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
        assert_eq!(edit_distance("subjcet", "subject"), 1);
        assert_eq!(edit_distance("qurey", "query"), 1);
    }

    #[test]
    fn suggests_only_close_keys() {
        assert_eq!(
            did_you_mean("readonly", TOOL_KEYS.iter().copied()),
            Some("read_only")
        );
        assert_eq!(
            did_you_mean("hiden_params", TOOL_KEYS.iter().copied()),
            Some("hidden_params")
        );
        assert_eq!(
            did_you_mean("descripton", ARG_KEYS.iter().copied()),
            Some("description")
        );
        assert_eq!(did_you_mean("frobnicate", TOOL_KEYS.iter().copied()), None);
    }

    #[test]
    fn lists_read_naturally() {
        assert_eq!(one_of(&["a"]), "`a`");
        assert_eq!(one_of(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
