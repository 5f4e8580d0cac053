//! The `tool` command-line program: every registered tool (the built-in coding
//! tools plus any `#[tool]` linked in) usable from a shell, a script or an
//! agent that prefers a command line to function calling. A stateless tool is
//! a self-contained command with JSON output.
//!
//! ```text
//! tool list [--json] [--tokens]
//! tool skills [--json]             (with --skills-dir DIR or $AGENT_TOOLS_SKILLS)
//! tool schema [NAME...] [--format json|openai|openai-strict|anthropic|gemini|mcp|...] [--no-fallback]
//! tool call NAME [ARGS_JSON] [--key=value ...]
//! tool batch < calls.jsonl
//! ```
//!
//! `tool call` prints exactly one JSON object, `{"trace_id", "tool", "title",
//! "output", "error", "notes", "metadata", "long_term_memory", "images",
//! "attachments"}`, when stdout is not a terminal (pipes, files: what scripts
//! read); on a terminal it prints the same result as readable text (title,
//! output, error, notes, files written); `--json` and `--text` force one.
//! `notes` are the lines telling the model how its input was read (e.g. a
//! repaired argument). It exits 0 on success, 1 when the tool returned an
//! error and 2 for usage errors. `tool batch` runs JSON Lines calls in one shared
//! context and answers each line as soon as it is done. `tool --help` and
//! `tool <command> --help` give the details with examples.
//!
//! # A `tool` program with your own tools
//!
//! The binary is a one-line `main` over [`main`]; a crate whose `#[tool]`
//! functions should be callable from a shell can ship the same program with
//! its tools linked in, or hand [`run`] a registry of its choosing:
//!
//! ```
//! use std::process::ExitCode;
//! use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};
//!
//! let mut registry = ToolRegistry::new();
//! let spec = ToolSpec::new("hello", "Say hello.", serde_json::json!({"type": "object"}));
//! registry.register(Tool::new(spec, |_args, _ctx| async { ToolResult::ok("hello") })?)?;
//!
//! // What `tool schema hello` and `tool call hello` do, on this process's stdout.
//! assert_eq!(tool_cli::run(registry.clone(), ["tool", "schema", "hello"]), ExitCode::SUCCESS);
//! assert_eq!(tool_cli::run(registry.clone(), ["tool", "call", "hello"]), ExitCode::SUCCESS);
//! assert_eq!(tool_cli::run(registry, ["tool", "call", "nope"]), ExitCode::from(2));
//! # Ok::<(), tool_core::RegistryError>(())
//! ```
//!
//! The context a run builds holds the trace id, page URL and timeout; the
//! built-in tools' [`Workspace`](tool_builtins::Workspace) and
//! [`FileLedger`](tool_builtins::FileLedger) (one for the whole run, so
//! `tool batch` keeps the read-before-write rule across lines); a
//! [`tool_core::ApprovalPolicy`] as approver for `--approve` (also the named
//! value `approval_policy`); with `--secrets`, a [`tool_core::SecretStore`];
//! and with `--skills-dir` the skills folders as read-only roots of the
//! workspace (the `skill` tool then joins the registry).
//!
//! # Secrets in the environment
//!
//! The program keeps its own environment, so keys it is configured to use
//! resolve; the processes it starts do not see secret-looking variables
//! (names with secret words as segments anywhere, `GITHUB_TOKEN_2`,
//! `MASTER_KEY_B64`, `OTP_SEED`; values with credentials,
//! `scheme://user:pass@host` in any variable; the rule is
//! [`tool_core::governance::secret_env`]): neither the commands of
//! `bash_command` nor stdio MCP servers, which get only what their
//! `.mcp.json` entry's `"env"` passes on purpose. At start-up [`main`] marks
//! the program not dumpable, so a command of the same user cannot read the
//! program's `/proc/<pid>/environ`; the environments of the processes that
//! started `tool` stay readable outside the sandbox (SECURITY.md).
//!
//! # Dependencies and why
//! - `clap` (derive): the standard Rust argument parser; the derive keeps the
//!   options, their help and their checks in one declaration. Built without
//!   its `color` feature: fewer dependencies, and no terminal escapes in help
//!   text that scripts and agents read.
//! - `tokio` (multi-thread runtime): tool-core's pipeline is async and needs a
//!   runtime with timers; sync tools run on its blocking pool. Built once per
//!   process and only for `call` and `batch`, so `list` and `schema` start
//!   without it.
//! - `serde` / `serde_json` (with `raw_value`): results are JSON; `raw_value`
//!   embeds a tool's JSON output byte for byte (key order and number
//!   spellings kept) instead of re-encoding it.
//! - `base64`: images and inline attachments arrive base64-encoded and are
//!   written to files as bytes; the crate tool-builtins already uses for the
//!   opposite direction, so it adds nothing to the build.
//! - `tool-core`, `tool-builtins`: the registry and the tools themselves.
//! - `rustix` (`fs`): the `O_NONBLOCK` flag for opening `--token-file`, so
//!   that a FIFO is refused rather than waited on; already in the tree
//!   (tool-builtins, tool-mcp), and safe, where `libc` would need `unsafe`.
//!
//! Not used: a temp-file crate (the output folder is a plain folder under the
//! system's temporary folder, files are created with `create_new`) and an RNG
//! crate (a generated trace id needs to differ between runs, not to be secret).

mod app;
mod app_help;
mod approve;
mod args;
mod base64;
mod bash_policy;
mod cli;
mod commands;
mod failure;
mod index;
mod interrupt;
mod mcp;
mod mcp_auth;
mod render;
mod scrub;
mod session;
mod skill_md;
mod skills;
mod small_file;
mod state_store;
mod text_parse;
mod token_report;
mod workspace;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use tool_core::ToolRegistry;
use tool_core::format::OnRefusal;

pub use crate::app::Cli;
use crate::app::Program;
use crate::cli::{Cli as Args, Command};
use crate::failure::Failure;
use crate::session::Session;

/// How long the program waits at exit for work a timed-out tool left behind.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// Exit status for success.
const EXIT_OK: u8 = 0;
/// Exit status when the tool returned an error (or input/output failed).
const EXIT_TOOL_ERROR: u8 = 1;
/// Exit status for usage errors: unknown tool, unparsable or invalid arguments, bad options.
const EXIT_USAGE: u8 = 2;

/// Runs the `tool` program on this process's arguments with the built-in
/// tools ([`tool_builtins::registry`]) and every other tool linked into the
/// binary ([`ToolRegistry::global`]). Never panics on any
/// input; a registry that cannot be built (two tools of one name) is reported
/// on stderr with exit status 1.
///
/// Call it first thing in `fn main`: it marks the process not dumpable
/// (`PR_SET_DUMPABLE`), so that commands run by `bash_command` cannot read
/// `/proc/<this process>/environ` unless they run as root; the environment
/// itself is kept, and children get it without its secret-looking variables
/// ([`tool_core::governance::secret_env`]).
pub fn main() -> ExitCode {
    scrub::protect_environment();
    match program_registry() {
        Ok(registry) => run(registry, std::env::args_os()),
        Err(e) => {
            let _ = writeln!(
                io::stderr(),
                "error: the tool registry cannot be built: {e}"
            );
            ExitCode::from(EXIT_TOOL_ERROR)
        }
    }
}

/// What the `tool` binary offers: the built-in tools
/// ([`tool_builtins::registry`], opt-in everywhere else) merged with every
/// other `#[tool]` linked in ([`ToolRegistry::global`]).
fn program_registry() -> Result<ToolRegistry, tool_core::RegistryError> {
    let mut registry = ToolRegistry::try_global().map_err(Clone::clone)?.clone();
    registry.merge(&tool_builtins::registry(), tool_core::OnConflict::Error)?;
    Ok(registry)
}

/// Runs the `tool` program with `registry` and the command line `args`
/// (program name first, as [`std::env::args_os`] gives it), reading stdin and
/// writing stdout and stderr. Returns the exit status: 0 success, 1 the tool
/// returned an error, 2 usage error.
///
/// Installs a panic hook that reports a (contained) tool panic in one line on
/// stderr instead of a backtrace: the panic is already in the call's result.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the public signature README shows stays put (cross-cutting §8)"
)]
pub fn run<I, T>(registry: ToolRegistry, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_program(&registry, &Program::default(), args)
}

/// The options of the shell and its sandbox, hidden from the help of a
/// program whose registry has no `bash_command` and refused there (they do
/// nothing there).
const SHELL_OPTIONS: &[&str] = &[
    "bash_policy",
    "sandbox",
    "sandbox_tier",
    "sandbox_best_effort",
    "sandbox_write",
    "sandbox_hide",
    "sandbox_limit",
    "sandbox_allow_unix_sockets",
    "mcp_sandbox",
];

/// The options of diagnostics after edits, hidden from the help of a
/// program whose registry has no `write_file` (they serve the file tools).
const LSP_OPTIONS: &[&str] = &["lsp", "lsp_wait", "lsp_config"];

/// The network options, hidden from the help of a program whose registry
/// has neither `bash_command` nor `web_fetch` (they govern both).
const NETWORK_OPTIONS: &[&str] = &["allow_net", "allow_net_private"];

/// The skills option, hidden from the help of a program whose registry has
/// no `read_file` (the `skill` tool's files are read with it).
const SKILLS_OPTIONS: &[&str] = &["skills_dirs"];

/// Whether `registry` is an application's own set of tools rather than the
/// `tool` binary's: it has none of the built-in shell and file tools.
fn is_app(registry: &ToolRegistry) -> bool {
    registry.get("bash_command").is_none() && registry.get("read_file").is_none()
}

/// The options of `common` given on the command line (or by environment)
/// that configure a built-in tool `registry` does not hold, each as
/// (option, the built-in it configures).
fn builtin_options_given(
    registry: &ToolRegistry,
    common: &cli::CommonOptions,
) -> Vec<(&'static str, &'static str)> {
    let mut given = Vec::new();
    if registry.get("bash_command").is_none() {
        let shell = [
            ("--bash-policy", common.bash_policy.is_some()),
            ("--sandbox", common.sandbox.is_some()),
            ("--sandbox-tier", common.sandbox_tier.is_some()),
            ("--sandbox-best-effort", common.sandbox_best_effort),
            ("--sandbox-write", !common.sandbox_write.is_empty()),
            ("--sandbox-hide", !common.sandbox_hide.is_empty()),
            ("--sandbox-limit", !common.sandbox_limit.is_empty()),
            (
                "--sandbox-allow-unix-sockets",
                common.sandbox_allow_unix_sockets,
            ),
            ("--mcp-sandbox", common.mcp_sandbox),
        ];
        given.extend(
            shell
                .into_iter()
                .filter(|(_, on)| *on)
                .map(|(o, _)| (o, "bash_command")),
        );
        if registry.get("web_fetch").is_none() {
            let network = [
                ("--allow-net", !common.allow_net.is_empty()),
                ("--allow-net-private", common.allow_net_private),
            ];
            given.extend(
                network
                    .into_iter()
                    .filter(|(_, on)| *on)
                    .map(|(o, _)| (o, "bash_command and web_fetch")),
            );
        }
    }
    if registry.get("read_file").is_none() && !common.skills_dirs.is_empty() {
        given.push(("--skills-dir", "skill and read_file"));
    }
    if registry.get("write_file").is_none() {
        if !common.lsp.is_empty() {
            given.push(("--lsp", "file tools (write_file, edit_file, …)"));
        }
        if common.lsp_wait.is_some() {
            given.push(("--lsp-wait", "file tools (write_file, edit_file, …)"));
        }
        if common.lsp_config.is_some() {
            given.push(("--lsp-config", "the file tools (write_file, edit_file, …)"));
        }
    }
    given
}

/// A usage error for an option or command of a built-in tool the program
/// `registry` serves does not include (`--bash-policy` in an app without a
/// shell): such an option would do nothing, and a person who copied a
/// `tool` command line would believe it applies (second review, finding 6).
fn refuse_builtin_options(registry: &ToolRegistry, cli: &Args) -> Result<(), Failure> {
    let program = app::program_name();
    let command = match &cli.command {
        Command::Skills { .. } if registry.get("read_file").is_none() => Some("skills"),
        Command::Index { .. }
            if registry.get("grep_content").is_none() && registry.get("glob_files").is_none() =>
        {
            Some("index")
        }
        _ => None,
    };
    if let Some(command) = command {
        return Err(Failure::Usage(format!(
            "`{program} {command}` works with the built-in tools, which {program} does not include; run `{program} --help` for its commands"
        )));
    }
    let mut given = builtin_options_given(registry, &cli.common);
    if matches!(cli.command, Command::Serve { no_index: true, .. }) && !uses_index(registry) {
        given.push((
            "--no-index",
            "search tools' content index (grep_content, glob_files, list_dir)",
        ));
    }
    if let Some((option, tool)) = given.first() {
        let all: Vec<&str> = given.iter().map(|(o, _)| *o).collect();
        let also = if all.len() > 1 {
            format!(" (given: {})", all.join(", "))
        } else {
            String::new()
        };
        return Err(Failure::Usage(format!(
            "{option} configures the built-in {tool}, which {program} does not include, so it would do nothing; remove it{also}"
        )));
    }
    Ok(())
}

/// The command line of the program `name` over `registry`: the `tool`
/// binary's, named `name`; for an application's registry (no built-in
/// shell), the built-ins' options hidden and every help text rewritten for
/// the application ([`app_help::for_app`]).
fn command_for(registry: &ToolRegistry, name: &str) -> clap::Command {
    use clap::CommandFactory;
    let mut command = Args::command()
        .name(name.to_owned())
        .bin_name(name.to_owned());
    if registry.get("bash_command").is_none() {
        let no_network = registry.get("web_fetch").is_none();
        let no_skills = registry.get("read_file").is_none();
        let no_writes = registry.get("write_file").is_none();
        let ids: Vec<String> = command
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .filter(|id| {
                SHELL_OPTIONS.contains(&id.as_str())
                    || (no_network && NETWORK_OPTIONS.contains(&id.as_str()))
                    || (no_skills && SKILLS_OPTIONS.contains(&id.as_str()))
                    || (no_writes && LSP_OPTIONS.contains(&id.as_str()))
            })
            .collect();
        for id in ids {
            command = command.mut_arg(id, |a| a.hide(true));
        }
    }
    if is_app(registry) {
        command = app_help::for_app(command, name, registry);
    }
    command
}

/// [`command_for`] with the program's version for `--version`: the
/// application's (from [`cli!`] / [`Cli::version`]), the same one MCP
/// `serverInfo` carries.
fn program_command(registry: &ToolRegistry, program: &Program, name: &str) -> clap::Command {
    command_for(registry, name).version(program.version().to_owned())
}

/// [`run`] with an application's settings ([`Cli`]).
fn run_program<I, T>(registry: &ToolRegistry, program: &Program, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // A tool's panic is contained and reported in its result; on stderr one
    // line is enough (no backtrace through the runtime's frames).
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(io::stderr(), "note: contained a panic: {info}");
    }));
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let name = program.named(args.first());
    Program::set_running(&name);
    let parsed = program_command(registry, program, &name)
        .try_get_matches_from(args)
        .and_then(|matches| <Args as clap::FromArgMatches>::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0; mistakes to stderr with 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    if registry.is_empty()
        && matches!(
            cli.command,
            Command::List { .. } | Command::Serve { .. } | Command::Call { .. }
        )
    {
        let _ = writeln!(io::stderr(), "warning: {}", empty_registry_hint(&name));
    }
    match execute(registry, program, cli) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(Failure::ToolError) => ExitCode::from(EXIT_TOOL_ERROR),
        Err(Failure::Usage(message)) => {
            let _ = writeln!(io::stderr(), "error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
        Err(Failure::InvalidArguments(message, tool)) => {
            let program = app::program_name();
            let hint = format!("Run `{program} schema {tool}` to see the parameters.");
            let _ = if message.is_empty() {
                writeln!(io::stderr(), "{hint}")
            } else {
                writeln!(io::stderr(), "error: {message}\n{hint}")
            };
            ExitCode::from(EXIT_USAGE)
        }
        // A reader that went away (`tool list | head -1`) needs no message.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            ExitCode::from(EXIT_TOOL_ERROR)
        }
        Err(Failure::Io(e)) => {
            let _ = writeln!(io::stderr(), "error: {e}");
            ExitCode::from(EXIT_TOOL_ERROR)
        }
    }
}

/// The warning for a program whose registry holds no tool: the usual cause
/// is a bin that never references the library its `#[tool]` fns live in, so
/// the linker left them out (third new-user review, H1).
fn empty_registry_hint(program: &str) -> String {
    format!(
        "no tools registered: {program}'s registry is empty. If its `#[tool]` fns are in a library crate, \
         the bin must reference that library (e.g. `use my_lib as _;` in main.rs) or the linker leaves \
         them out; `ToolRegistry::of_crate` takes the library's name, not the bin's"
    )
}

/// Whether `registry` holds a tool that reads the content index built at
/// `serve` (the search built-ins); without one, no index is built and
/// `--no-index` is refused.
fn uses_index(registry: &ToolRegistry) -> bool {
    ["grep_content", "glob_files", "list_dir"]
        .iter()
        .any(|name| registry.get(name).is_some())
}

/// The tool `tool call` names (its first word), for lazy MCP start: `None`
/// for every other command, which may use any server's tools.
fn called_tool(command: &Command) -> Option<&str> {
    match command {
        Command::Call { words, .. } => words.first().map(String::as_str),
        _ => None,
    }
}

fn execute(registry: &ToolRegistry, program: &Program, mut cli: Args) -> Result<(), Failure> {
    refuse_builtin_options(registry, &cli)?;
    let call = matches!(cli.command, Command::Call { .. });
    if matches!(cli.command, Command::Serve { .. }) {
        app::set_serving();
    }
    cli.common
        .approve
        .get_or_insert_with(|| approve::Approve::default_for(call));
    if let Command::Parse { format, tools } = &cli.command {
        return text_parse::run(
            format,
            tools.as_deref(),
            &mut io::stdin().lock(),
            &mut io::stdout().lock(),
        );
    }
    if let Command::Mcp { action } = &cli.command {
        let runtime = runtime()?;
        return runtime.block_on(mcp_auth::run(action, &cli.common, &mut io::stdout().lock()));
    }
    if let Command::Skills { json } = cli.command {
        return skills::list(
            &cli.common,
            json,
            &mut io::stdout().lock(),
            &mut io::stderr().lock(),
        );
    }
    // --skills-dir / $AGENT_TOOLS_SKILLS add the `skill` tool, to a program
    // with the built-in file tools (an application's ignores the variable).
    let extended = if registry.get("read_file").is_some() {
        skills::with_skill_tool(registry, &cli.common)?
    } else {
        registry.clone()
    };
    let registry = &extended;
    // With --mcp-config the imported servers' connections live on the
    // runtime built here, which then also runs the calls.
    let (live, mut early_runtime) = match &cli.common.mcp_config {
        Some(path) => {
            let runtime = runtime()?;
            let sandbox = cli.common.sandbox_policy().map_err(Failure::Usage)?;
            let live = runtime
                .block_on(mcp::import(
                    registry,
                    path,
                    cli.common.mcp_protocol,
                    workspace::resolve_root(cli.common.workspace.as_deref())
                        .ok()
                        .as_deref(),
                    called_tool(&cli.command),
                    (&sandbox, cli.common.mcp_sandbox),
                ))
                .map_err(Failure::Usage)?;
            (live, Some(runtime))
        }
        None => (tool_mcp::LiveRegistry::new(registry.clone()), None),
    };
    let view = view_of(&live, &cli.common);
    let snapshot = view.registry();
    let registry: &ToolRegistry = &snapshot;
    let mut take_runtime = || early_runtime.take().map_or_else(runtime, Ok);
    let stdout = io::stdout();
    match cli.command {
        // Answered before the registry was extended (it loads the skills itself).
        Command::Skills { .. } | Command::Parse { .. } => Ok(()),
        Command::List { json, tokens: true } => {
            token_report::list(registry, json, &mut stdout.lock())
        }
        Command::List {
            json,
            tokens: false,
        } => {
            commands::list(registry, json, &mut stdout.lock())?;
            if !json {
                mcp::write_unavailable(&live, &mut stdout.lock())?;
            }
            Ok(())
        }
        Command::SkillMd { names, dir, mcp } => skill_md::run(
            registry,
            &cli.common,
            &names,
            dir.as_deref(),
            mcp.as_deref(),
            &mut stdout.lock(),
        ),
        Command::Schema {
            names,
            format,
            no_fallback,
        } => commands::schema(
            &view,
            registry,
            &names,
            format,
            if no_fallback {
                OnRefusal::Refuse
            } else {
                OnRefusal::Fallback
            },
            &mut stdout.lock(),
            &mut io::stderr().lock(),
        ),
        Command::Call {
            pretty,
            json,
            text,
            words,
        } => {
            let Some((name, args)) = words.split_first() else {
                return Err(Failure::Usage(format!(
                    "`{} call` needs a tool name",
                    app::program_name()
                )));
            };
            if let Some(message) = mcp::unavailable_tool(&live, name) {
                return Err(Failure::Usage(message));
            }
            if let Some(help) = commands::tool_help(registry, name, args) {
                let mut out = stdout.lock();
                out.write_all(help.as_bytes())?;
                return Ok(out.flush()?);
            }
            let session = Session::open(&cli.common, program.context())
                .map_err(Failure::Usage)?
                .with_jobs_outliving_this_process();
            let runtime = take_runtime()?;
            let outcome = commands::call(
                registry,
                &session,
                &runtime,
                name,
                args,
                commands::CallOutput::choose(pretty, json, text, stdout.is_terminal()),
                &mut stdout.lock(),
            );
            finish(runtime);
            outcome
        }
        Command::Batch => {
            let session = Session::open(&cli.common, program.context())
                .map_err(Failure::Usage)?
                .with_jobs_outliving_this_process();
            let runtime = take_runtime()?;
            let outcome = commands::batch(
                registry,
                &session,
                &runtime,
                &mut io::stdin().lock(),
                &mut stdout.lock(),
            );
            finish(runtime);
            outcome
        }
        Command::Index { action } => index::run(action, &cli.common, &mut stdout.lock()),
        // Answered before any server was imported.
        Command::Mcp { .. } => Ok(()),
        Command::Serve {
            http,
            page_size,
            allow_remote,
            token_file,
            token,
            limits,
            no_index,
            state,
            state_file,
            state_prefix,
            state_max_keys,
            skills_as_prompts,
            input_before_task,
        } => {
            let has_shell = registry.get("bash_command").is_some();
            let access =
                mcp::http_access(http, has_shell, allow_remote, token_file.as_deref(), token)
                    .map_err(Failure::Usage)?
                    .map(|serve| serve.with_limits(limits.limits()));
            let mut common = cli.common.clone();
            common.command_secret_files.extend(token_file.clone());
            common.command_secret_files.extend(state_file.clone());
            let state = match (state, &state_file) {
                (None, Some(path)) => {
                    Some(state_store::read_url_file(path).map_err(Failure::Usage)?)
                }
                (state, _) => state,
            };
            let mut session = Session::open(&common, program.context()).map_err(Failure::Usage)?;
            let mut view = view;
            if let Some(url) = &state {
                let options = state_store::Options {
                    prefix: state_prefix.as_deref(),
                    max_keys: state_max_keys,
                };
                view = state_store::attach(&mut session, view, url, &options)
                    .map_err(Failure::Usage)?;
            }
            if !no_index && uses_index(registry) {
                index::attach(&mut session);
            }
            // Stdio serves one client, one request after another: a single
            // thread saves a cross-thread wake-up per message (sync tool
            // bodies still run on the blocking pool). Imported servers keep
            // the multi-threaded runtime their connections live on.
            let runtime = match (http, early_runtime.take()) {
                (_, Some(runtime)) => runtime,
                (None, None) => stdio_runtime()?,
                (Some(_), None) => runtime()?,
            };
            let catalog = skills_as_prompts
                .then(|| skills::catalog_for_serve(&cli.common, &mut io::stderr().lock()))
                .flatten();
            let served = mcp::Served {
                view,
                page_size,
                catalog,
                input_before_task,
            };
            let outcome = mcp::serve(served, &session, &runtime, access, program);
            // A cancelled call's command may still be stopping on the
            // blocking pool (bash_command: SIGTERM, SIGKILL after its grace);
            // the runtime waits for it, within the shutdown timeout.
            runtime.shutdown_timeout(tool_mcp::SHUTDOWN_TIMEOUT);
            outcome
        }
    }
}

/// The view of `live` that `--allow-tools`, `--deny-tools` and `--tags`
/// ask for (all of it without them). A pattern that matches no tool is
/// reported on stderr, since it is most likely a typo.
fn view_of(live: &tool_mcp::LiveRegistry, common: &cli::CommonOptions) -> tool_core::RegistryView {
    let mut view = tool_core::RegistryView::new(live.clone());
    let snapshot = live.snapshot();
    for (option, patterns) in [
        ("--allow-tools", &common.allow_tools),
        ("--deny-tools", &common.deny_tools),
        ("--defer", &common.defer),
        ("--keep-loaded", &common.keep_loaded),
    ] {
        for p in patterns {
            let pattern = tool_core::NamePattern::new(p.as_str());
            if !snapshot.names().iter().any(|n| pattern.matches(n)) {
                let _ = writeln!(io::stderr(), "warning: {option} `{p}` matches no tool");
            }
        }
    }
    if !common.allow_tools.is_empty() {
        view = view.allow(common.allow_tools.iter().map(String::as_str));
    }
    if !common.deny_tools.is_empty() {
        view = view.deny(common.deny_tools.iter().map(String::as_str));
    }
    if !common.tags.is_empty() {
        let known = snapshot
            .names()
            .iter()
            .filter_map(|n| snapshot.get(n))
            .any(|t| t.spec().tags.iter().any(|tag| common.tags.contains(tag)));
        if !known {
            let _ = writeln!(
                io::stderr(),
                "warning: --tags {}: no tool has any of these tags",
                common.tags.join(", ")
            );
        }
        view = view.tags(common.tags.iter().cloned());
    }
    if !common.defer.is_empty() {
        view = view.defer(common.defer.iter().map(String::as_str));
    }
    if !common.keep_loaded.is_empty() {
        view = view.keep_loaded(common.keep_loaded.iter().map(String::as_str));
    }
    let scoped =
        !common.allow_tools.is_empty() || !common.deny_tools.is_empty() || !common.tags.is_empty();
    if scoped && view.names().is_empty() {
        let _ = writeln!(
            io::stderr(),
            "warning: the view leaves no tools (check --allow-tools, --deny-tools and --tags)"
        );
    }
    view
}

/// The runtime for `tool serve` over stdio: one thread, timers and I/O.
fn stdio_runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::Io(io::Error::other(format!(
                "cannot start the async runtime: {e}"
            )))
        })
}

/// Shuts the runtime down once every result is written. A sync tool that
/// timed out may still hold a thread of the blocking pool, and dropping the
/// runtime would wait for it; the program has answered, so it waits only
/// briefly for tasks to clean up (a tool's child processes are killed by
/// their drop handlers) and then exits.
fn finish(runtime: tokio::runtime::Runtime) {
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
}

/// The runtime for `call` and `batch`: timers and I/O for the tools, two
/// workers (calls run one at a time; the second serves tasks a tool spawns).
fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::Io(io::Error::other(format!(
                "cannot start the async runtime: {e}"
            )))
        })
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;
    use tool_core::{Tool, ToolResult, ToolSpec};

    use super::*;

    /// An application's registry: one tool of its own, no built-ins.
    fn shop() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        let spec = ToolSpec::new(
            "price",
            "Look up a price.",
            json!({"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}),
        );
        let tool = Tool::new(spec, |_args, _ctx| async { ToolResult::ok("1") }).expect("valid");
        registry.register(tool).expect("registers");
        registry
    }

    fn help_of(command: &mut clap::Command, sub: &str) -> String {
        command
            .find_subcommand_mut(sub)
            .expect("the subcommand")
            .render_long_help()
            .to_string()
    }

    #[test]
    fn version_is_the_programs_own() {
        let cli = Cli::new(shop()).version("3.1.4");
        let version = program_command(&shop(), cli.program(), "shop")
            .try_get_matches_from(["shop", "--version"])
            .expect_err("--version ends parsing");
        assert_eq!(version.kind(), clap::error::ErrorKind::DisplayVersion);
        assert_eq!(version.to_string(), "shop 3.1.4\n");
    }

    #[test]
    fn an_apps_subcommand_help_names_the_app_and_its_tools() {
        let mut command = command_for(&shop(), "shop");
        command.build();
        for sub in ["call", "serve", "list", "schema", "batch", "parse"] {
            let help = help_of(&mut command, sub);
            for foreign in [
                "tool call ",
                "tool serve ",
                "tool batch ",
                "tool list ",
                "tool schema ",
                "tool parse ",
                "`tool ",
                "read_file",
                "grep_content",
                "list_dir",
                "bash_command",
                "built-in",
            ] {
                assert!(
                    !help.contains(foreign),
                    "`shop {sub} --help` names {foreign}:\n{help}"
                );
            }
            assert!(help.contains(&format!("Usage: shop {sub}")), "{help}");
        }
        let call = help_of(&mut command, "call");
        assert!(
            call.contains("shop call price '{\"sku\": \"example\"}'"),
            "{call}"
        );
        assert!(call.contains("shop call price --sku=example"), "{call}");
        assert!(call.contains("on a terminal"), "{call}");
        let serve = help_of(&mut command, "serve");
        assert!(
            serve.contains("shop serve --http 127.0.0.1:8080"),
            "{serve}"
        );
        // A usage error's usage line too.
        let error = command_for(&shop(), "shop")
            .try_get_matches_from(["shop", "call"])
            .expect_err("a name is required")
            .render()
            .to_string();
        assert!(
            error.contains("Usage: shop call [OPTIONS] <NAME>"),
            "{error}"
        );
        assert!(!error.contains("tool call"), "{error}");
    }

    #[test]
    fn the_tool_programs_call_usage_stays() {
        let mut registry = shop();
        registry
            .merge(&tool_builtins::registry(), tool_core::OnConflict::Error)
            .expect("merges");
        let mut command = command_for(&registry, "tool");
        command.build();
        let call = help_of(&mut command, "call");
        assert!(call.contains("Usage: tool call [OPTIONS] <NAME>"), "{call}");
        assert!(call.contains("tool call read_file"), "{call}");
        // The long help says what a terminal gets, not only the JSON.
        assert!(
            call.contains("on a terminal, the result as readable text"),
            "{call}"
        );
    }

    /// README's merge example (second review, finding 8), as written there, runs.
    #[test]
    fn readmes_merge_example_runs() -> Result<(), tool_core::RegistryError> {
        use tool_core::{OnConflict, ToolRegistry};

        let readme = include_str!("../../README.md");
        for line in [
            "let mut registry = ToolRegistry::global().clone();",
            "registry.merge(&tool_builtins::registry(), OnConflict::Error)?;",
        ] {
            assert!(readme.contains(line), "README lacks `{line}`");
        }
        let mut registry = ToolRegistry::global().clone();
        registry.merge(&tool_builtins::registry(), OnConflict::Error)?;
        assert!(registry.get("bash_command").is_some());
        Ok(())
    }

    #[test]
    fn an_app_refuses_the_options_of_builtins_it_lacks() {
        let refused = |line: &[&str]| {
            let cli = Args::try_parse_from(line).expect("parses");
            match refuse_builtin_options(&shop(), &cli) {
                Err(Failure::Usage(message)) => message,
                other => panic!("{line:?} accepted: {}", other.is_ok()),
            }
        };
        let m = refused(&["shop", "--bash-policy", "/nonexistent", "list"]);
        assert!(
            m.starts_with("--bash-policy configures the built-in bash_command, which"),
            "{m}"
        );
        assert!(m.contains("remove it"), "{m}");
        let m = refused(&["shop", "--sandbox", "off", "--allow-net", "*", "list"]);
        assert!(m.contains("(given: --sandbox, --allow-net)"), "{m}");
        let m = refused(&["shop", "--skills-dir", "s", "list"]);
        assert!(
            m.starts_with("--skills-dir configures the built-in skill"),
            "{m}"
        );
        let m = refused(&["shop", "skills"]);
        assert!(m.contains("skills` works with the built-in tools"), "{m}");
        // The app's own options pass; the `tool` program takes them all.
        let cli = Args::try_parse_from(["shop", "--approve", "all", "list"]).expect("parses");
        assert!(refuse_builtin_options(&shop(), &cli).is_ok());
        let cli = Args::try_parse_from(["tool", "--bash-policy", "/p", "--sandbox", "off", "list"])
            .expect("parses");
        assert!(refuse_builtin_options(&tool_builtins::registry(), &cli).is_ok());
    }
}
