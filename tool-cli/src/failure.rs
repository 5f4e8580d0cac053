//! [`Failure`]: how a command ended, with its exit status. Its own module so
//! that the commands and the modules they use (session, skills, tokens, mcp)
//! share it without importing each other.

use std::io;

/// How a command ended.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The command line asked for something impossible: exit 2, message on stderr.
    Usage(String),
    /// The tool returned an error (already printed): exit 1.
    ToolError,
    /// The tool (named second) rejected its arguments (already printed):
    /// exit 2, message on stderr (none when empty: the readable result on a
    /// terminal showed it) with a pointer to `tool schema <tool>`.
    InvalidArguments(String, String),
    /// Reading input or writing output failed: exit 1, message on stderr.
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}
