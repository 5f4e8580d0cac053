//! A new user's app, built outside the workspace from README's "Install"
//! lines by `scripts/scratch-app` (run by `.ci/run`): two tools of its own, an
//! agent on a scripted model. It checks what the first hour of issue 24
//! promised: with `tool-agent`'s default features, `ToolRegistry::global()`
//! holds the app's tools and nothing else (no shell, no file writes).
//! Exits 1 with a message when a check fails.

use std::process::ExitCode;

use tool_agent::{Agent, ScriptedClient, ScriptedTurn, StopReason};
use tool_core::format::ToolCall;
use tool_core::{ToolContext, ToolRegistry, tool};

/// Look up the price of a product, in cents.
///
/// # Arguments
/// * `sku` - The product's stock-keeping unit, e.g. "MUG-1".
#[tool(read_only)]
fn price(sku: String) -> Result<u32, String> {
    match sku.as_str() {
        "MUG-1" => Ok(1250),
        other => Err(format!("no product `{other}`")),
    }
}

/// Put a product in the customer's basket.
///
/// # Arguments
/// * `sku` - The product's stock-keeping unit.
/// * `count` - How many.
#[tool(hidden_params = ["customer"])]
fn add_to_basket(sku: String, #[arg(default = 1)] count: u32, customer: String) -> String {
    format!("{customer}: {count} x {sku}")
}

fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what.to_owned()) }
}

async fn run() -> Result<(), String> {
    let global = ToolRegistry::global();
    check(
        global.names() == ["add_to_basket", "price"],
        &format!("global() holds {:?}, not only the app's two tools", global.names()),
    )?;
    let model = ScriptedClient::new([
        ScriptedTurn::calls([ToolCall::new("c1", "price", r#"{"sku": "MUG-1"}"#)]),
        ScriptedTurn::text("A mug costs 12.50."),
    ]);
    let out = Agent::new(model, global.clone())
        .context(ToolContext::new().with_value("customer", "ana"))
        .max_turns(4)
        .run("How much is a mug?")
        .await
        .map_err(|e| e.to_string())?;
    check(out.stop == StopReason::Answered, "the agent did not answer")?;
    check(out.text == "A mug costs 12.50.", &out.text)?;
    let r = global
        .execute(
            "add_to_basket",
            r#"{"sku": "MUG-1"}"#,
            &ToolContext::new().with_value("customer", "ana"),
        )
        .await;
    check(r.output == "ana: 1 x MUG-1", &format!("{r:?}"))?;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => {
            println!("scratch app: ok (global() = {:?})", ToolRegistry::global().names());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scratch app: {e}");
            ExitCode::FAILURE
        }
    }
}
