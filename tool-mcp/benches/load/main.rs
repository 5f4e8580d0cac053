//! A loaded MCP server: starts `tool serve --http 127.0.0.1:0` on a fresh
//! workspace and runs the load client (`client.rs`) against it, then prints
//! the figures. Exits with status 1 when any answer was wrong, the server
//! stopped answering, or its RSS grew after the load ended.
//!
//! `cargo bench -p tool-mcp --bench load -- TOOL_BINARY [SESSIONS] [SECONDS] [SETTLE]`
//! (defaults 200 sessions, 60 s, 10 s; `LOAD_DISCONNECTORS`, default
//! sessions / 20, sets the clients that disconnect mid-call,
//! `LOAD_DISCONNECT=session|raw` how: default both); `scripts/load.sh` builds the release
//! binary and runs it.

mod client;

use std::io::BufRead;
use std::process::{Command, Stdio};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(binary) = args.first() else {
        eprintln!("usage: load TOOL_BINARY [SESSIONS] [SECONDS] [SETTLE]");
        std::process::exit(2);
    };
    let num = |i: usize, default: f64| {
        args.get(i)
            .and_then(|a| a.parse::<f64>().ok())
            .unwrap_or(default)
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (sessions, seconds, settle) = (num(1, 200.0) as usize, num(2, 60.0), num(3, 10.0) as u64);
    let workspace = std::env::temp_dir().join(format!("tool-mcp-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&workspace);
    if let Err(e) = std::fs::create_dir_all(&workspace) {
        eprintln!("load: cannot create {}: {e}", workspace.display());
        std::process::exit(2);
    }
    let status = run(binary, &workspace, sessions, seconds, settle);
    let _ = std::fs::remove_dir_all(&workspace);
    std::process::exit(status);
}

fn run(
    binary: &str,
    workspace: &std::path::Path,
    sessions: usize,
    seconds: f64,
    settle: u64,
) -> i32 {
    let mut server = match Command::new(binary)
        .args(["serve", "--http", "127.0.0.1:0", "--workspace"])
        .arg(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("load: cannot start {binary}: {e}");
            return 2;
        }
    };
    let mut banner = String::new();
    if let Some(err) = server.stderr.take() {
        let mut reader = std::io::BufReader::new(err);
        let _ = reader.read_line(&mut banner);
        // Keep draining the server's stderr so it never blocks on it.
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                eprintln!("server: {line}");
            }
        });
    }
    let addr = banner
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|w| w.split('/').next())
        .and_then(|a| a.parse().ok());
    let Some(addr) = addr else {
        eprintln!("load: no address in the server's banner {banner:?}");
        let _ = server.kill();
        return 2;
    };
    let cfg = client::Config {
        addr,
        workspace: workspace.to_path_buf(),
        sessions,
        seconds,
        server_pid: Some(server.id()),
        settle,
        disconnectors: std::env::var("LOAD_DISCONNECTORS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(sessions.div_ceil(20)),
        disconnect: match std::env::var("LOAD_DISCONNECT").as_deref() {
            Ok("session") => client::Disconnect::Session,
            Ok("raw") => client::Disconnect::Raw,
            _ => client::Disconnect::Both,
        },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("load: {e}");
            return 2;
        }
    };
    let report = runtime.block_on(client::run(cfg.clone()));
    let still_running = matches!(server.try_wait(), Ok(None));
    let _ = server.kill();
    let _ = server.wait();
    match report {
        Err(e) => {
            eprintln!("load: {e}");
            2
        }
        Ok(report) => {
            print!("{}", report.summary(&cfg));
            println!(
                "RSS stable after the load: {}; server process alive at the end: {still_running}",
                report.rss_stable()
            );
            if report.wrong == 0 && report.answers_after && report.rss_stable() && still_running {
                0
            } else {
                1
            }
        }
    }
}
