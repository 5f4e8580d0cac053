//! Errors of building a registry (not of tool calls: those are [`ToolResult`](crate::ToolResult)s).

use crate::tool::spec::SourceLocation;

/// Why a tool could not be created or registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name breaks `^[a-zA-Z0-9_-]{1,64}$` (the OpenAI and Anthropic rule).
    #[error(
        "invalid tool name {name:?}: tool names must match ^[a-zA-Z0-9_-]{{1,64}}$ (OpenAI and Anthropic)"
    )]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// The spec is unusable (blank description, non-object parameters
    /// schema; for a `#[tool]` fn also a flattened type that is not a struct,
    /// a flattened field whose name breaks the parameter-name rule, a
    /// `display` or `editable_params` entry naming no parameter).
    #[error("invalid tool `{name}`: {reason}")]
    InvalidSpec {
        /// The tool's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// Two tools have the same name and the policy is [`OnConflict::Error`](crate::OnConflict::Error).
    #[error("duplicate tool name `{name}`: defined at {} and at {}", site(.first.as_ref()), site(.second.as_ref()))]
    Duplicate {
        /// The shared name.
        name: String,
        /// Where the registered tool was defined (`None` for runtime tools).
        first: Option<SourceLocation>,
        /// Where the newcomer was defined.
        second: Option<SourceLocation>,
    },
    /// Two parameters of one `#[tool]` fn would reach the model under one
    /// name, which the macro could not see: a field of an `#[arg(flatten)]`
    /// struct and another parameter, or fields of two flattened structs.
    #[error(
        "tool `{tool}` has two parameters named `{parameter}`: {first} and {second}; rename one (`#[serde(rename = \"...\")]` on a field, `#[arg(rename = \"...\")]` on a parameter)"
    )]
    ParameterCollision {
        /// The tool's name.
        tool: String,
        /// The shared model-facing name.
        parameter: String,
        /// Who had the name first: "the parameter `query: String`", "a field
        /// of `SearchArgs` (the flattened parameter `args`)", ...
        first: String,
        /// The field that wants it too, said the same way.
        second: String,
    },
    /// [`ToolRegistry::of_crate`](crate::ToolRegistry::of_crate) found no
    /// `#[tool]` fn of the named crate among those linked into the program.
    #[error(
        "no `#[tool]` fn of the crate `{crate_name}` is linked into this program{}{}; the name is the library crate's (a bin's `CARGO_CRATE_NAME` is the bin's own name), and a bin must reference that library (e.g. `use {} as _;`) or the linker leaves its tools out",
        suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default(),
        if known.is_empty() { " (no crate of this program has tools)".to_owned() } else { format!(" (crates with tools: {})", known.join(", ")) },
        suggestion.as_deref().unwrap_or(crate_name)
    )]
    NoToolsInCrate {
        /// The crate name asked for, `-` read as `_`.
        crate_name: String,
        /// The closest crate name that has tools, if one is close.
        suggestion: Option<String>,
        /// Every crate of the program that has `#[tool]` fns, sorted (at most 20).
        known: Vec<String>,
    },
    /// A name given to [`ToolRegistry::schemas_named`](crate::ToolRegistry::schemas_named)
    /// is not a registered tool.
    #[error(
        "no tool named `{name}` is registered{}",
        suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
    )]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The closest registered name, if one is close.
        suggestion: Option<String>,
    },
    /// Several errors at once (e.g. every duplicate in the global registry).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Many(Vec<RegistryError>),
}

impl RegistryError {
    /// `Ok` for no error, the error itself for one, [`RegistryError::Many`]
    /// for several (a nested `Many` is spread into the list).
    pub(crate) fn from_all(errors: Vec<RegistryError>) -> Result<(), RegistryError> {
        let mut flat = Vec::with_capacity(errors.len());
        for e in errors {
            match e {
                RegistryError::Many(inner) => flat.extend(inner),
                one => flat.push(one),
            }
        }
        match flat.len() {
            0 => Ok(()),
            1 => Err(flat.remove(0)),
            _ => Err(RegistryError::Many(flat)),
        }
    }
}

fn site(loc: Option<&SourceLocation>) -> String {
    loc.map_or_else(|| "<runtime registration>".to_owned(), ToString::to_string)
}
