//! An application's own `tool` program: its tools, its state, every command
//! of the `tool` binary (`list`, `schema`, `call`, `batch`, `serve`).
//!
//! ```sh
//! cargo run -p examples --example app_cli -- call price '{"sku": "MUG-1"}'
//! cargo run -p examples --example app_cli -- serve     # an MCP server over stdio
//! ```
//!
//! Run without arguments (`cargo run -p examples --example app_cli`) it runs
//! itself as a shell would, with stdout a pipe, and asserts what it prints:
//! so this example doubles as a test in CI.

use std::process::{Command, ExitCode};

use tool_core::{State, ToolContext, ToolRegistry, tool};

/// The shop's catalogue: the application's state.
struct Catalogue {
    currency: &'static str,
    prices: Vec<(&'static str, u32)>,
}

/// Look up the price of a product.
///
/// # Arguments
/// * `sku` - The product's stock-keeping unit, e.g. "MUG-1".
#[tool(read_only)]
fn price(sku: String, catalogue: State<Catalogue>) -> Result<String, String> {
    let (_, cents) = catalogue
        .prices
        .iter()
        .find(|(s, _)| *s == sku)
        .ok_or_else(|| format!("no product `{sku}`; products: MUG-1, TEE-2"))?;
    Ok(format!(
        "{sku}: {}.{:02} {}",
        cents / 100,
        cents % 100,
        catalogue.currency
    ))
}

/// The program itself: this app's tools (not the built-ins) over its catalogue.
fn program() -> tool_cli::Cli {
    // `cli!`: this crate's version in MCP `serverInfo` (`Cli::new` alone
    // would report tool-cli's).
    tool_cli::cli!(ToolRegistry::global().clone())
        .context(|| {
            ToolContext::new().with_state(Catalogue {
                currency: "EUR",
                prices: vec![("MUG-1", 1250), ("TEE-2", 1999)],
            })
        })
        .server_info("shop", env!("CARGO_PKG_VERSION"))
}

/// Runs this program as a shell would and returns (exit status, stdout).
fn shell(args: &[&str]) -> (Option<i32>, String) {
    let exe = std::env::current_exe().expect("the example's path");
    let out = Command::new(exe)
        .args(args)
        .output()
        .expect("the example runs itself");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn main() -> ExitCode {
    if std::env::args_os().len() > 1 {
        return program().run();
    }
    // `tool list`: the app's one tool, no shell among them.
    let (status, listed) = shell(&["list"]);
    assert_eq!(status, Some(0));
    assert!(listed.starts_with("price"), "{listed}");
    assert!(!listed.contains("bash_command"), "{listed}");
    println!("$ app_cli list\n{listed}");

    // `tool call`: the tool reads the app's state; stdout is a pipe, so JSON.
    let (status, printed) = shell(&["call", "price", r#"{"sku": "MUG-1"}"#]);
    assert_eq!(status, Some(0), "{printed}");
    let result: serde_json::Value = serde_json::from_str(&printed).expect("one JSON object");
    assert_eq!(result["output"], "MUG-1: 12.50 EUR");
    println!("$ app_cli call price '{{\"sku\": \"MUG-1\"}}'\n{printed}");

    // --text forces the readable form; a tool error exits 1.
    let (status, printed) = shell(&["call", "--text", "price", "--sku=CUP-9"]);
    assert_eq!(status, Some(1));
    assert!(
        printed.contains("error (failed): no product `CUP-9`"),
        "{printed}"
    );
    println!("$ app_cli call --text price --sku=CUP-9\n{printed}");

    // Its help names the program and its own tool, never `tool` or a built-in.
    let (status, help) = shell(&["call", "--help"]);
    assert_eq!(status, Some(0));
    assert!(help.contains("Usage: shop call [OPTIONS] <NAME>"), "{help}");
    assert!(help.contains("shop call price --sku=example"), "{help}");
    assert!(
        !help.contains("tool call") && !help.contains("read_file"),
        "{help}"
    );
    // A built-in's option is refused, not silently ignored.
    let refused = Command::new(std::env::current_exe().expect("the example's path"))
        .args(["--bash-policy", "policy.json", "list"])
        .output()
        .expect("the example runs itself");
    assert_eq!(refused.status.code(), Some(2));
    println!(
        "$ app_cli --bash-policy policy.json list\n{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    ExitCode::SUCCESS
}
