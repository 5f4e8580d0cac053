//! [`Cli`]: an application's own `tool` program over its tools and its state.

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::{Arc, PoisonError, RwLock};

use tool_core::{ToolContext, ToolRegistry};

/// Builds the context an application's tools need (typed state, named values).
type ContextFn = dyn Fn() -> ToolContext + Send + Sync;

/// The settings of one program: where its base context comes from and the
/// name and version `tool serve` reports.
#[derive(Clone)]
pub(crate) struct Program {
    context: Option<Arc<ContextFn>>,
    /// Set by [`Cli::server_info`]; else the name the program was started
    /// under (see [`Program::named`]).
    name: Option<String>,
    version: String,
}

impl Default for Program {
    /// The `tool` binary: no base context, named after its file (`tool`)
    /// with this crate's version.
    fn default() -> Self {
        Self {
            context: None,
            name: None,
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// The name of the running program, for its help, its hints ("Run `NAME
/// schema …`") and its `serve` banner: set once per run by `run_program`.
static PROGRAM_NAME: RwLock<String> = RwLock::new(String::new());

/// Whether this run is `serve`: refusal hints then name `serve`'s options
/// (`NAME serve --approve all`), not `call`'s. Set by `execute`.
static SERVING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks this run as `serve` (see [`serving`]).
pub(crate) fn set_serving() {
    SERVING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether this run is `serve`.
pub(crate) fn serving() -> bool {
    SERVING.load(std::sync::atomic::Ordering::Relaxed)
}

/// The running program's name (`tool` before a run sets it).
pub(crate) fn program_name() -> String {
    let name = PROGRAM_NAME.read().unwrap_or_else(PoisonError::into_inner);
    if name.is_empty() {
        "tool".to_owned()
    } else {
        name.clone()
    }
}

impl Program {
    /// A fresh base context for one run, when the application gave one.
    pub(crate) fn context(&self) -> Option<ToolContext> {
        self.context.as_ref().map(|f| f())
    }

    /// The program's name (MCP `serverInfo.name`): the one given to
    /// [`Cli::server_info`], else the file name of `argv0` without its
    /// folder (and `.exe`), else `tool`.
    pub(crate) fn named(&self, argv0: Option<&OsString>) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        argv0
            .map(std::path::Path::new)
            .and_then(std::path::Path::file_stem)
            .and_then(|s| s.to_str())
            .filter(|s| !s.is_empty())
            .unwrap_or("tool")
            .to_owned()
    }

    /// Records `name` as the running program's (see [`program_name`]).
    pub(crate) fn set_running(name: &str) {
        let mut slot = PROGRAM_NAME.write().unwrap_or_else(PoisonError::into_inner);
        name.clone_into(&mut slot);
    }

    /// The running program's name (MCP `serverInfo.name`).
    pub(crate) fn name(&self) -> String {
        self.name.clone().unwrap_or_else(program_name)
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
    /// when merged in), with an empty base context, named after its
    /// executable's file (its help, hints, `serve` banner and MCP
    /// `serverInfo.name`), with tool-cli's version until
    /// [`server_info`](Self::server_info) says otherwise.
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

    /// The version `--version` prints and `serve` reports to MCP clients
    /// (`serverInfo.version`), keeping the name. A fn cannot see its caller's version, so
    /// [`Cli::new`] starts with tool-cli's: pass
    /// `env!("CARGO_PKG_VERSION")`, or build with [`cli!`](crate::cli),
    /// which does.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.program.version = version.into();
        self
    }

    /// The name and version `serve` reports to MCP clients (`serverInfo`);
    /// the name is also the one help and hints use. Default: the
    /// executable's file name (`tool` for the `tool` binary) and tool-cli's
    /// version.
    #[must_use]
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.program.name = Some(name.into());
        self.program.version = version.into();
        self
    }

    /// The program's settings (for this crate's tests and `run`).
    pub(crate) fn program(&self) -> &Program {
        &self.program
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
        crate::run_program(&self.registry, self.program(), args)
    }
}

/// [`Cli::new`] over `registry` with the calling crate's version
/// (`env!("CARGO_PKG_VERSION")` expanded where the macro is written), so an
/// app's `serve` reports its own version in MCP `serverInfo`, not
/// tool-cli's; the name stays the executable's file name.
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     tool_cli::cli!(tool_core::ToolRegistry::global().clone()).run()
/// }
/// ```
#[macro_export]
macro_rules! cli {
    ($registry:expr $(,)?) => {
        $crate::Cli::new($registry).version(::core::env!("CARGO_PKG_VERSION"))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_named_after_its_file_unless_told() {
        let program = Program::default();
        let argv0 = |s: &str| OsString::from(s);
        assert_eq!(program.named(Some(&argv0("/usr/local/bin/shop"))), "shop");
        assert_eq!(
            program.named(Some(&argv0("./target/debug/shop.exe"))),
            "shop"
        );
        assert_eq!(program.named(Some(&argv0(""))), "tool");
        assert_eq!(program.named(None), "tool");
        let told = Cli::new(ToolRegistry::new()).server_info("store", "2.0");
        assert_eq!(told.program.named(Some(&argv0("/bin/shop"))), "store");
        assert_eq!(told.program.version(), "2.0");
        let versioned = Cli::new(ToolRegistry::new()).version("3.1.4");
        assert_eq!(versioned.program.version(), "3.1.4");
        assert_eq!(versioned.program.named(Some(&argv0("/bin/shop"))), "shop");
    }

    /// `cli!` takes the version of the crate it is written in (here
    /// tool-cli's own, so the test compares with the env! of this crate).
    #[test]
    fn the_cli_macro_takes_the_callers_version() {
        let cli = crate::cli!(ToolRegistry::new());
        assert_eq!(cli.program.version(), env!("CARGO_PKG_VERSION"));
        assert!(cli.program.name.is_none());
    }
}
