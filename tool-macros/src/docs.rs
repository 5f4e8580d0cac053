//! Doc comments → description text.
//!
//! Literal `#[doc = "..."]` lines (what `///` becomes) lose one leading space
//! and are joined with `\n`. Any other doc value, such as
//! `#[doc = include_str!("search.md")]`, is kept as an expression and the
//! whole text is emitted as `concat!(...)`, so rustc expands it. The macro
//! does not parse sections (`# Arguments`, `Args:`, `# Examples`): the runtime
//! does, from the raw text.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The doc text of a fn or a parameter.
pub(crate) struct Doc {
    parts: Vec<Part>,
}

/// One `#[doc]` attribute.
enum Part {
    /// A literal line (or block), one leading space stripped from each
    /// line, and the span of its attribute (where a diagnostic about it points).
    Text(String, Span),
    /// A doc value rustc has to expand, e.g. `include_str!("x.md")`.
    Expr(Box<Expr>),
}

impl Doc {
    /// Collects the `#[doc = ...]` attributes of `attrs`, in order.
    /// `#[doc(hidden)]` and other list forms carry no text and are skipped.
    pub(crate) fn from_attrs(attrs: &[Attribute]) -> Self {
        let parts = attrs
            .iter()
            .filter_map(|attr| match &attr.meta {
                Meta::NameValue(nv) if nv.path.is_ident("doc") => Some(match &nv.value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(s), ..
                    }) => Part::Text(strip_one_space(&s.value()), attr.span()),
                    other => Part::Expr(Box::new(other.clone())),
                }),
                _ => None,
            })
            .collect();
        Self { parts }
    }

    /// No `#[doc]` attribute at all.
    pub(crate) fn is_missing(&self) -> bool {
        self.parts.is_empty()
    }

    /// Whether every part is a literal, so the text is known to the macro.
    pub(crate) fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(..)))
    }

    /// The text when every part is a literal.
    pub(crate) fn literal_text(&self) -> Option<String> {
        let mut lines = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            match part {
                Part::Text(text, _) => lines.push(text.as_str()),
                Part::Expr(_) => return None,
            }
        }
        Some(lines.join("\n"))
    }

    /// The text's lines, each with the span of the `#[doc]` attribute it
    /// comes from, when every part is a literal (`None` otherwise: the text
    /// of `include_str!` is known only to rustc).
    pub(crate) fn literal_lines(&self) -> Option<Vec<(&str, Span)>> {
        let mut lines = Vec::new();
        for part in &self.parts {
            match part {
                Part::Text(text, span) => lines.extend(text.split('\n').map(|l| (l, *span))),
                Part::Expr(_) => return None,
            }
        }
        Some(lines)
    }

    /// Whether the text is known to be blank (whitespace only). Unknown text
    /// (from `include_str!` and friends) is not known to be blank: it is
    /// checked at compile time by an emitted assertion instead.
    pub(crate) fn is_known_blank(&self) -> bool {
        self.literal_text().is_some_and(|t| t.trim().is_empty())
    }

    /// An expression of type `&'static str` with the text: a string literal,
    /// or `concat!(...)` when some part must be expanded by rustc.
    pub(crate) fn to_str_expr(&self, span: Span) -> TokenStream {
        if let Some(text) = self.literal_text() {
            return syn::LitStr::new(&text, span).into_token_stream();
        }
        let mut pieces = Vec::with_capacity(self.parts.len() * 2);
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                pieces.push(quote!("\n"));
            }
            pieces.push(match part {
                Part::Text(text, _) => syn::LitStr::new(text, span).into_token_stream(),
                Part::Expr(expr) => expr.to_token_stream(),
            });
        }
        let concat_span = self
            .parts
            .iter()
            .find_map(|p| match p {
                Part::Expr(e) => Some(e.span()),
                Part::Text(..) => None,
            })
            .unwrap_or(span);
        quote::quote_spanned!(concat_span=> ::core::concat!(#(#pieces),*))
    }
}

/// Strips one leading space from each line: `/// text` becomes `#[doc = " text"]`.
fn strip_one_space(text: &str) -> String {
    text.split('\n')
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(
        clippy::needless_pass_by_value,
        reason = "test helper taking `quote!` output"
    )]
    fn doc(attrs: TokenStream) -> Doc {
        let item: syn::ItemFn = syn::parse2(quote!(#attrs fn f() {})).unwrap();
        Doc::from_attrs(&item.attrs)
    }

    #[test]
    fn literal_lines_lose_one_space_and_join() {
        let d = doc(quote! {
            #[doc = " Search the web."]
            #[doc = ""]
            #[doc = "   indented"]
            #[doc(hidden)]
        });
        assert_eq!(
            d.literal_text().as_deref(),
            Some("Search the web.\n\n  indented")
        );
        assert!(!d.is_known_blank());
        assert!(!d.is_missing());
    }

    #[test]
    fn block_docs_strip_each_line() {
        let d = doc(quote!(#[doc = " one\n two\n"]));
        assert_eq!(d.literal_text().as_deref(), Some("one\ntwo\n"));
    }

    #[test]
    fn blank_and_missing_docs() {
        assert!(doc(quote!(#[doc = " "] #[doc = ""])).is_known_blank());
        assert!(doc(quote!()).is_missing());
    }

    #[test]
    fn expanded_docs_become_concat() {
        let d = doc(quote!(#[doc = " Intro"] #[doc = include_str!("x.md")]));
        assert!(!d.is_literal());
        assert!(!d.is_known_blank());
        let text = d.to_str_expr(Span::call_site()).to_string();
        assert!(text.contains("concat !"), "{text}");
        assert!(text.contains("include_str !"), "{text}");
    }
}
