//! [`Cli`]: an application's own `tool` program over its tools and its state.

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;

use tool_core::{ToolContext, ToolRegistry};

/// Builds the context an application's tools need (typed state, named values).
type ContextFn = dyn Fn() -> ToolContext + Send + Sync;

/// The settings of one program: where its base context comes from and the
/// name and version `tool serve` reports.
#[derive(Clone)]
pub(crate) struct Program {
    context: Option<Arc<ContextFn>>,
    name: String,
    version: String,
}

impl Default for Program {
    /// The `tool` binary: no base context, named `tool` with this crate's version.
    fn default() -> Self {
        Self {
            context: None,
            name: "tool".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

impl Program {
    /// A fresh base context for one run, when the application gave one.
    pub(crate) fn context(&self) -> Option<ToolContext> {
        self.context.as_ref().map(|f| f())
    }

    /// The program's name (MCP `serverInfo.name`).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The program's version (MCP `serverInfo.version`).
    pub(crate) fn version(&self) -> &str {
        &self.version
    }
}

/// An application's own `tool` program: the commands of the `tool` binary
/// (`list`, `schema`, `call`, `batch`, `serve`, with every option) over the
/// application's registry, each call starting from the application's context,
/// so tools that read typed state (`State<T>`) or named values work from a
/// shell exactly as inside the application.
///
/// ```no_run
/// use std::process::ExitCode;
/// use tool_core::{ToolContext, ToolRegistry};
///
/// struct Shop { currency: &'static str }
///
/// fn main() -> ExitCode {
///     // The app's own tools; merge `tool_builtins::registry()` to offer the built-ins too.
///     let registry = ToolRegistry::global().clone();
///     tool_cli::Cli::new(registry)
///         .context(|| ToolContext::new().with_state(Shop { currency: "EUR" }))
///         .server_info(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
///         .run()
/// }
/// ```
///
/// The run's own settings go on top of the application's context: the trace
/// id, the workspace and the built-in tools' ledger (`--workspace`), the
/// approver (`--approve`), `--page-url`, `--timeout`, `--secrets`; a named
/// value or state of the same name or type is replaced by them.
///
/// Exit status as [`run`](crate::run): 0 success, 1 the tool returned an
/// error, 2 usage error.
#[derive(Clone)]
pub struct Cli {
    registry: ToolRegistry,
    program: Program,
}

impl Cli {
    /// The program over `registry` (exactly these tools: the built-ins only
    /// when merged in), with an empty base context, named `tool`.
    #[must_use]
    pub fn new(registry: ToolRegistry) -> Self {
        Self {
            registry,
            program: Program::default(),
        }
    }

    /// Every run's context starts as `build()` returns it (called once per
    /// run, before the first call; `tool batch` and `tool serve` share it
    /// across their calls).
    #[must_use]
    pub fn context(mut self, build: impl Fn() -> ToolContext + Send + Sync + 'static) -> Self {
        self.program.context = Some(Arc::new(build));
        self
    }

    /// The name and version `tool serve` reports to MCP clients
    /// (`serverInfo`); default `tool` and tool-cli's version.
    #[must_use]
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.program.name = name.into();
        self.program.version = version.into();
        self
    }

    /// Runs on this process's command line. Like [`main`](crate::main) it
    /// first marks the process not dumpable (children get the environment
    /// without its secret-looking variables); call it first thing in `fn main`.
    #[must_use]
    pub fn run(self) -> ExitCode {
        crate::scrub::protect_environment();
        self.run_with(std::env::args_os())
    }

    /// Runs on the command line `args` (program name first, as
    /// [`std::env::args_os`] gives it), reading stdin and writing stdout and
    /// stderr; the environment is left as it is.
    pub fn run_with<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        crate::run_program(&self.registry, &self.program, args)
    }
}
