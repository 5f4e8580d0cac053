//! An agent run exported to an OpenTelemetry collector over OTLP/HTTP.
//!
//! ```text
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 \
//!     cargo run -p tool-agent --features otel --example otlp
//! ```
//!
//! The model is scripted (no server needed): it calls `add` once, then
//! answers. The spans (`invoke_agent calculator`, `chat scripted`,
//! `execute_tool add`) go to `$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`
//! (default `http://localhost:4318`); the example exits 1 when the export
//! fails (no collector there).

use tool_agent::{Agent, ScriptedClient, ScriptedTurn};
use tool_core::format::ToolCall;
use tool_core::{Tool, ToolContext, ToolRegistry, ToolSpec};
use tracing_subscriber::layer::SubscriberExt;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .unwrap_or_else(|_| "http://localhost:4318".to_owned());
    let provider = tool_agent::otel::otlp_provider(&endpoint, "otlp-example")?;
    let subscriber = tracing_subscriber::registry().with(tool_agent::otel::layer(&provider));
    tracing::subscriber::set_global_default(subscriber)?;

    let mut registry = ToolRegistry::new();
    let spec = ToolSpec::new("add", "Adds two integers.", serde_json::Value::Null);
    registry.register(Tool::typed(
        spec,
        |args: AddArgs, _: ToolContext| async move { (args.a + args.b).to_string() },
    )?)?;
    let model = ScriptedClient::new([
        ScriptedTurn::calls([ToolCall::new("call-1", "add", r#"{"a": 2, "b": 40}"#)]),
        ScriptedTurn::text("2 + 40 = 42"),
    ]);
    let out = Agent::new(model, registry)
        .name("calculator")
        .run("What is 2 + 40?")
        .await?;
    println!("answer: {}", out.text);

    // Sends the batch now; fails when nothing listens at the endpoint.
    provider.force_flush()?;
    provider.shutdown()?;
    println!("spans exported to {endpoint}/v1/traces");
    Ok(())
}
