//! `tool serve` and `--mcp-config`: the registry as an MCP server, and MCP
//! servers' tools next to the built-ins.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

use tool_core::ToolRegistry;
use tool_mcp::{HttpAccess, LiveRegistry, McpServer};

use crate::failure::Failure;
use crate::session::Session;

/// Connects to every server of the `.mcp.json` file at `path` and imports
/// its tools (as `<server>__<tool>`) into a live copy of `registry`.
///
/// Each server is isolated: entries with `"disabled": true` are not
/// started; one that is invalid, cannot start, exits at once or whose
/// names collide is reported on stderr (one `warning:` line naming it) and
/// recorded in the registry as unavailable, and the others are imported.
/// A server that dies later loses its tools and is reported the same way
/// (by a task on the current runtime).
///
/// # Errors
/// A usage message naming the file when it cannot be read or is not an MCP
/// config at all.
///
/// `era` applies to the entries without a `"protocol"` key (`--mcp-protocol`);
/// `workspace`, when known, is every server's one root (`roots/list`).
/// `sandbox` is the policy of `--sandbox*` / `--allow-net` and whether
/// `--mcp-sandbox` was given: entries with `"sandbox"` (and all `command`
/// entries with `--mcp-sandbox`) run in it, writable in `workspace` (else
/// the current folder).
///
/// Lazy start (issue 26): with `only` (the tool `tool call` runs) just the
/// server whose tools are named `<server>__…` and match it is looked at, and
/// none for a built-in, so a call never starts or waits for another server.
/// Every server is imported lazily ([`tool_mcp::import_mcp_servers_lazily`]):
/// one whose tool list is cached fresh in the private state folder
/// ([`tool_mcp::ToolListCache::in_state_dir`]) is started only when one of
/// its tools is called, so `list`, `schema` and `serve`'s `tools/list` start
/// only the servers without a fresh list; a started server stops after its
/// `"idleTimeout"`.
pub(crate) async fn import(
    registry: &ToolRegistry,
    path: &Path,
    era: tool_mcp::ProtocolEra,
    workspace: Option<&Path>,
    only: Option<&str>,
    sandbox: (&tool_core::SandboxPolicy, bool),
) -> Result<LiveRegistry, String> {
    let here = match workspace {
        Some(ws) => ws.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot determine the current folder: {e}"))?,
    };
    let live = LiveRegistry::new(registry.clone());
    // Checked first (regular file, at most 1 MiB, no wait on a FIFO), then
    // read by tool-mcp with its own messages.
    crate::small_file::read_config(path, "--mcp-config", "an MCP config (JSON)")?;
    let entries = tool_mcp::read_mcp_config(path)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|entry| {
            only.is_none_or(|tool| {
                tool.starts_with(&format!("{}__", tool_mcp::server_prefix(entry.name())))
            })
        })
        .map(|entry| match entry {
            tool_mcp::McpServerEntry::Enabled(source) => {
                let source = crate::mcp_auth::with_token_cache(source)
                    .with_default_era(era)
                    .with_default_sandbox(sandbox.0, &here, sandbox.1);
                tool_mcp::McpServerEntry::Enabled(match workspace {
                    Some(root) => source.with_roots([root]),
                    None => source,
                })
            }
            other => other,
        })
        .collect();
    let mut changes = live.subscribe();
    let cache = tool_mcp::ToolListCache::in_state_dir();
    tool_mcp::import_mcp_servers_lazily(entries, &live, cache.as_ref()).await;
    // Later deaths: every change of the registry from now on may be one.
    changes.mark_unchanged();
    let mut reported = std::collections::BTreeMap::new();
    report_new_unavailable(&live, &mut reported);
    let watched = live.clone();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            report_new_unavailable(&watched, &mut reported);
        }
    });
    Ok(live)
}

/// Where `tool serve --http` listens and who may use it.
pub(crate) struct HttpServe {
    addr: SocketAddr,
    access: HttpAccess,
    limits: tool_mcp::HttpLimits,
}

impl HttpServe {
    /// The same, with these session, header and body limits.
    pub(crate) fn with_limits(self, limits: tool_mcp::HttpLimits) -> Self {
        Self { limits, ..self }
    }
}

/// Checks `--http`, `--allow-remote`, `--token-file` and `--token`: a
/// non-loopback address needs `--allow-remote`, which needs a token; a token
/// on a loopback address is required too. `None` serves stdio.
///
/// # Errors
/// A usage message that says which option to add or fix.
pub(crate) fn http_access(
    http: Option<SocketAddr>,
    has_shell: bool,
    allow_remote: bool,
    token_file: Option<&Path>,
    token: Option<String>,
) -> Result<Option<HttpServe>, String> {
    let Some(addr) = http else {
        return Ok(None);
    };
    let token = match (token_file, token) {
        (Some(path), _) => Some(read_token(path)?),
        (None, token) => token,
    };
    if !addr.ip().is_loopback() && !allow_remote {
        // The shell is named only where it is served.
        let shell = if has_shell {
            " (bash_command is a shell)"
        } else {
            ""
        };
        return Err(format!(
            "refusing to serve on {addr}: it is not a loopback address, and anyone who can \
             reach it could run every tool served{shell}. Serve \
             127.0.0.1:{port} or [::1]:{port}, or allow clients on other machines with \
             --allow-remote and a bearer token (--token-file FILE or --token TOKEN).",
            port = addr.port()
        ));
    }
    let access = match (allow_remote, token) {
        (true, None) => {
            return Err(
                "--allow-remote needs a bearer token that clients must send: \
                 --token-file FILE (e.g. after `(umask 077; openssl rand -hex 32 > FILE)`) or --token TOKEN"
                    .to_owned(),
            );
        }
        (true, Some(token)) => HttpAccess::remote(&token),
        (false, Some(token)) => HttpAccess::loopback().with_token(&token),
        (false, None) => Ok(HttpAccess::loopback()),
    }
    .map_err(|e| format!("--token: {}", e.message()))?;
    Ok(Some(HttpServe {
        addr,
        access,
        limits: tool_mcp::HttpLimits::default(),
    }))
}

/// Largest `--token-file` read, in bytes (4 KiB): a bearer token is a line of
/// a few dozen characters (`openssl rand -hex 32` gives 64), so anything
/// longer is a wrong file, not a token.
pub(crate) const MAX_TOKEN_FILE_BYTES: u64 = 4096;

/// The token of a `--token-file`: its first line, without surrounding whitespace.
///
/// The file must be a regular file (after symlinks) of at most
/// [`MAX_TOKEN_FILE_BYTES`] that only its owner may read or write (mode
/// `0600` or stricter: anyone who can read the token can run every tool
/// served): it is opened non-blocking, so a FIFO or a
/// device (`/dev/zero`, a terminal) is refused at once instead of read
/// forever or waited on, and at most that many bytes plus one are read
/// whatever the file grows to meanwhile.
///
/// # Errors
/// A message naming the file when it cannot be opened, is not a regular
/// file, may be read or written by group or others (saying to `chmod 600`
/// it), is larger than the limit, is not UTF-8 or has an empty first line.
fn read_token(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let bytes = crate::small_file::read_private(
        path,
        "--token-file",
        "a file holding the token on its first line (e.g. `(umask 077; openssl rand -hex 32 > token)`)",
        MAX_TOKEN_FILE_BYTES,
    )?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("--token-file {shown}: the file is not UTF-8 text"))?;
    let token = text.lines().next().unwrap_or_default().trim();
    if token.is_empty() {
        return Err(format!(
            "--token-file {shown}: the file is empty; put the token on its first line"
        ));
    }
    Ok(token.to_owned())
}

/// Writes one `warning:` line on stderr per unavailable server (or changed
/// reason) not in `reported` yet, and remembers it there.
fn report_new_unavailable(
    live: &LiveRegistry,
    reported: &mut std::collections::BTreeMap<String, String>,
) {
    for (server, reason) in live.unavailable() {
        if reported.get(&server) != Some(&reason) {
            let _ = writeln!(
                std::io::stderr(),
                "warning: MCP server `{server}` is unavailable: {reason}"
            );
            reported.insert(server, reason);
        }
    }
}

/// `tool list` (text form) after the tools: one line per unavailable MCP
/// server, `# unavailable: <server>: <reason>` (a `#` line, so scripts that
/// take the first word of each line as a tool name can skip it).
pub(crate) fn write_unavailable(live: &LiveRegistry, out: &mut impl Write) -> std::io::Result<()> {
    for (server, reason) in live.unavailable() {
        writeln!(out, "# unavailable: {server}: {reason}")?;
    }
    out.flush()
}

/// For `tool call NAME` with a NAME that is not registered but belongs to an
/// unavailable MCP server: the message saying so, naming the server and why.
pub(crate) fn unavailable_tool(live: &LiveRegistry, name: &str) -> Option<String> {
    live.unavailable_server_of(name).map(|(server, reason)| {
        format!("tool `{name}` is not available: MCP server `{server}` is unavailable: {reason}")
    })
}

/// What `tool serve` offers: the tools of `view` (`page_size` per
/// `tools/list` page) and, with `--skills-as-prompts`, the skills' catalog
/// of prompts and resources.
pub(crate) struct Served {
    pub(crate) view: tool_core::RegistryView,
    pub(crate) page_size: usize,
    pub(crate) catalog: Option<tool_mcp::Catalog>,
    /// `--input-before-task`: tools whose first input comes before their task.
    pub(crate) input_before_task: Vec<String>,
}

/// Serves `live` over stdio, or Streamable HTTP as `http` says, until the
/// client goes away (stdio) or the process gets `SIGTERM`, `SIGINT` or
/// `SIGHUP`; calls still running are then cancelled and waited for (at most
/// [`tool_mcp::SHUTDOWN_TIMEOUT`]), and the background jobs the sessions
/// started and that still run are stopped (`job_kill`). Prints one line on stderr saying what is
/// served, and a warning when clients on other machines are let in.
pub(crate) fn serve(
    served: Served,
    session: &Session,
    runtime: &tokio::runtime::Runtime,
    http: Option<HttpServe>,
    program: &crate::app::Program,
) -> Result<(), Failure> {
    let Served {
        view,
        page_size,
        catalog,
        input_before_task,
    } = served;
    // Count what `tools/list` offers: a tool with URL patterns that do not
    // match the server's page URL is not listed (issue 24, banner count).
    let registry = view.registry();
    let page_url = session.ctx.page_url();
    let offered = registry.tool_names(page_url).len();
    let elsewhere = registry.len().saturating_sub(offered);
    let count = if elsewhere == 0 {
        format!("{offered} tools")
    } else {
        format!(
            "{offered} tools (and {elsewhere} more offered only on page URLs their patterns match)"
        )
    };
    let workspace = session.ctx.value_str("workspace").unwrap_or("?").to_owned();
    for name in &input_before_task {
        let support = registry.get(name).map(|t| t.spec().task_support);
        if support.is_none_or(|s| s == tool_core::TaskSupport::Forbidden) {
            let _ = writeln!(
                std::io::stderr(),
                "warning: tool serve: --input-before-task {name}: no served tool of that name \
                 has task support (#[tool(task_support = ...)]); the flag does nothing for it"
            );
        }
    }
    // One ledger per MCP session, and per client trace in the stateless
    // era (issue 23 item 5): what one client read never lets another write.
    let server = McpServer::new(view)
        .with_context(session.ctx.clone())
        .with_session_setup(|ctx, scope| match scope {
            tool_mcp::ClientScope::Trace(trace) => tool_builtins::for_trace(ctx, trace),
            _ => tool_builtins::for_session(ctx),
        })
        .with_page_size(page_size)
        .with_input_before_task(input_before_task)
        .with_server_info(program.name(), program.version());
    let server = match catalog {
        Some(catalog) => server.with_catalog(catalog),
        None => server,
    };
    // `GET /health` (HTTP only): 503 while the --state store does not answer.
    let server = match session
        .ctx
        .state::<std::sync::Arc<dyn tool_core::state::StateStore>>()
    {
        Some(store) => {
            let store: std::sync::Arc<dyn tool_core::state::StateStore> = (*store).clone();
            server.with_health_check(move || store.ping().is_ok())
        }
        None => server,
    };
    let io_failure = |e: tool_mcp::Error| Failure::Io(std::io::Error::other(e.to_string()));
    let served = match http {
        None => {
            banner(&format!("{count} over stdio, workspace {workspace}"));
            crate::index::start(&session.ctx);
            runtime.block_on(server.serve_stdio()).map_err(io_failure)
        }
        Some(HttpServe {
            addr,
            access,
            limits,
        }) => runtime.block_on(async move {
            let stop = tool_mcp::shutdown_signal().map_err(io_failure)?;
            let remote = access.is_remote();
            let (bound, task) = server
                .with_http_limits(limits)
                .serve_http_with(addr, access, stop.clone())
                .await
                .map_err(io_failure)?;
            banner(&format!(
                "{count} at http://{bound}/mcp, workspace {workspace}"
            ));
            crate::index::start(&session.ctx);
            if remote {
                let _ = writeln!(
                    std::io::stderr(),
                    "warning: tool serve: remote access is on: anyone who can reach {bound} \
                     and has the token can run every tool served, bash_command included"
                );
            }
            let mut task = task;
            tokio::select! {
                () = stop.cancelled() => {
                    let grace = tool_mcp::SHUTDOWN_TIMEOUT + std::time::Duration::from_millis(500);
                    let _ = tokio::time::timeout(grace, task).await;
                }
                _ = &mut task => {}
            }
            Ok(())
        }),
    };
    // Each MCP session has a trace id of its own that no later process can
    // name, so its background jobs would run on to their lifetime cap out
    // of everyone's reach: they end with the server (review 27 F15).
    let jobs = tool_core::jobs::JobRegistry::of_context(&session.ctx)
        .map_or(0, |jobs| jobs.stop_started_here());
    if jobs > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "{} serve: stopped {jobs} background job(s) of the MCP sessions",
            crate::app::program_name()
        );
    }
    served
}

/// The one stderr line a person who starts the server sees.
fn banner(what: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "{} serve: MCP server (protocol 2025-11-25 and 2026-07-28) with {what}",
        crate::app::program_name()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_refusal_names_the_shell_only_where_it_is_served() {
        let addr: SocketAddr = "0.0.0.0:18932".parse().expect("an address");
        let refusal = |has_shell| match http_access(Some(addr), has_shell, false, None, None) {
            Err(message) => message,
            Ok(_) => panic!("a public address is served without --allow-remote"),
        };
        assert!(
            refusal(true).contains("could run every tool served (bash_command is a shell). Serve")
        );
        let app = refusal(false);
        assert!(
            app.contains("could run every tool served. Serve 127.0.0.1:18932"),
            "{app}"
        );
        assert!(!app.contains("bash_command"), "{app}");
    }
}
