//! Errors of rendering a tool for a provider: which rule was broken, where, and who says so.

use std::fmt;
use std::sync::Arc;

use super::Format;

/// A provider rule that a rendering must follow, with the document that states it.
///
/// Every lowering step and validator that refuses a schema names the rule it
/// enforces, so an error can be checked against the provider's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Stable identifier, `<target>.<topic>`, e.g. `openai.strict.required`.
    pub id: &'static str,
    /// The rule in one sentence.
    pub text: &'static str,
    /// Where the provider documents it (document and section).
    pub source: &'static str,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}; source: {})", self.text, self.id, self.source)
    }
}

/// A problem found by one step, before the tool and format are known.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Violation {
    pub(crate) path: String,
    pub(crate) rule: &'static Rule,
    pub(crate) message: String,
}

impl Violation {
    pub(crate) fn new(path: &str, rule: &'static Rule, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            rule,
            message: message.into(),
        }
    }
}

/// Why one tool cannot be rendered for one [`Format`].
///
/// Carries the JSON path of the offending schema node, the [`Rule`] that was
/// broken (with its source) and the pipeline step that found it. The other
/// formats are unaffected: a tool that Gemini cannot take still renders for
/// OpenAI.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct FormatError {
    /// The tool's name.
    pub tool: String,
    /// The target format.
    pub format: Format,
    /// The pipeline step that failed (`check_name`, `inline_refs`, …, or `validate`).
    pub step: &'static str,
    /// JSON Pointer (RFC 6901) to the node, relative to the tool's parameters
    /// schema as it stood when the step ran; empty for the root, `name` for the tool name.
    pub path: String,
    /// The broken rule and its source.
    pub rule: &'static Rule,
    /// What is wrong and what to do about it.
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "the root"
        } else {
            self.path.as_str()
        };
        write!(
            f,
            "tool `{}` cannot be rendered for {}: at {path} (step `{}`): {} [rule {}: {}; source: {}]",
            self.tool,
            self.format,
            self.step,
            self.message,
            self.rule.id,
            self.rule.text,
            self.rule.source
        )
    }
}

impl FormatError {
    pub(crate) fn from_violation(
        tool: &str,
        format: Format,
        step: &'static str,
        v: Violation,
    ) -> Self {
        Self {
            tool: tool.to_owned(),
            format,
            step,
            path: v.path,
            rule: v.rule,
            message: v.message,
        }
    }
}

/// The looser form a tool was rendered in when it could not take the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FallbackForm {
    /// OpenAI or Anthropic: the function without strict mode (`"strict": false`
    /// for OpenAI, no `strict` for Anthropic), its schema as in the plain format.
    NonStrict,
    /// Gemini: the declaration carries `parametersJsonSchema` (the canonical
    /// JSON Schema, as [`Format::GeminiJsonSchema`]) instead of `parameters`.
    ParametersJsonSchema,
}

impl FallbackForm {
    /// A short description: `without strict mode`, `with parametersJsonSchema`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::NonStrict => "without strict mode",
            Self::ParametersJsonSchema => "with parametersJsonSchema instead of parameters",
        }
    }
}

/// One tool of a registry rendering that was rendered in a looser form than
/// the format's strictest, and why (see [`ToolSchemas::fallbacks`](super::ToolSchemas::fallbacks)).
///
/// Displays as one line naming the tool, the format, the form used and the
/// refused rule, e.g. ``tool `counts` rendered for OpenAI Chat Completions
/// (strict) without strict mode: … (at /properties/p, step `close_objects`; rule …)``.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Fallback {
    /// The tool's name.
    pub tool: String,
    /// The format asked for.
    pub format: Format,
    /// The form it was rendered in instead.
    pub form: FallbackForm,
    /// Why the strictest form was refused.
    pub reason: FormatError,
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.reason;
        let path = if r.path.is_empty() {
            "the root"
        } else {
            r.path.as_str()
        };
        write!(
            f,
            "tool `{}` rendered for {} {}: {} (at {path}, step `{}`; rule {}: {}; source: {})",
            self.tool,
            self.format,
            self.form.describe(),
            r.message,
            r.step,
            r.rule.id,
            r.rule.text,
            r.rule.source
        )
    }
}

/// Some tools of a registry cannot be rendered for a format.
///
/// [`partial`](Self::partial) holds the rendering of every other tool, so a
/// caller may log the errors and go on without the failing tools.
#[derive(Debug, Clone, thiserror::Error)]
pub struct RenderError {
    pub(crate) errors: Arc<[FormatError]>,
    pub(crate) partial: super::ToolSchemas,
}

impl RenderError {
    /// One error per tool that failed, in name order.
    pub fn errors(&self) -> &[FormatError] {
        &self.errors
    }

    /// The rendering of the tools that succeeded.
    pub fn partial(&self) -> &super::ToolSchemas {
        &self.partial
    }

    /// Consumes the error, returning the rendering of the tools that succeeded.
    pub fn into_partial(self) -> super::ToolSchemas {
        self.partial
    }
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.errors.len();
        write!(
            f,
            "{n} tool{} cannot be rendered: ",
            if n == 1 { "" } else { "s" }
        )?;
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// A provider payload that is not a tool call of the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {format} tool calls: at {path}: {message}")]
#[non_exhaustive]
pub struct CallParseError {
    /// The provider format being parsed.
    pub format: Format,
    /// JSON Pointer into the payload.
    pub path: String,
    /// What was expected.
    pub message: String,
}

impl CallParseError {
    pub(crate) fn new(format: Format, path: &str, message: impl Into<String>) -> Self {
        Self {
            format,
            path: if path.is_empty() {
                "the root".to_owned()
            } else {
                path.to_owned()
            },
            message: message.into(),
        }
    }
}
