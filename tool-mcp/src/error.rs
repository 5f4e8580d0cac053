//! [`Error`]: what can go wrong connecting to, serving or calling over MCP.

use std::fmt;

/// The class of an [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server could not be started or reached, or the handshake failed.
    Connect,
    /// The connection is gone (the server exited or closed its streams).
    ConnectionClosed,
    /// A request got no answer within its timeout.
    Timeout,
    /// The peer answered with a protocol error or something unexpected.
    Protocol,
    /// Registering imported tools failed (a name is taken, a spec is invalid).
    Registry,
    /// An `.mcp.json` file is unreadable or malformed.
    Config,
    /// Local input/output failed (binding a port, the standard streams).
    Io,
}

impl ErrorKind {
    /// A short lowercase name (`connection_closed`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::ConnectionClosed => "connection_closed",
            Self::Timeout => "timeout",
            Self::Protocol => "protocol",
            Self::Registry => "registry",
            Self::Config => "config",
            Self::Io => "io",
        }
    }
}

/// An error of this crate: a [`kind`](Self::kind) and a message meant for
/// people (it names the server and what was attempted).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The class of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
