//! One word of a simple command, as the lexer read it.

/// One word of a simple command, unquoted, with what the shell would still
/// do to it when it runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Word {
    pub(crate) text: String,
    /// Holds an expansion outside single quotes: `$x`, `${x}`, `$(...)`,
    /// backticks, `$((...))`, `$'...'`: its value is known only when it runs.
    pub(crate) expands: bool,
    /// Holds an unquoted pattern (`*`, `?`, `[...]`) or brace expansion
    /// (`{a,b}`): the shell replaces it by what it matches.
    pub(crate) pattern: bool,
}
