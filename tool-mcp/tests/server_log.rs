//! A server's log messages (`notifications/message`) become `tracing`
//! events under the target `tool_mcp::server_log`, with the server's name
//! and the MCP level mapped to a `tracing` level (README "Importing servers:
//! roots, sampling, elicitation, log messages, progress"). Against the
//! fixture server, a real process. Its own test binary: the recording
//! subscriber is the process's global one.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::sync::{Arc, Mutex};

use serde_json::Map;
use tool_core::ToolContext;
use tool_mcp::{McpToolSource, ProtocolEra};
use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

/// One recorded event: level, `server` field, message.
type Seen = (tracing::Level, String, String);

struct Record(Arc<Mutex<Vec<Seen>>>);

#[derive(Default)]
struct Fields {
    server: String,
    message: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "server" {
            value.clone_into(&mut self.server);
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "server" if self.server.is_empty() => self.server = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Record {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != "tool_mcp::server_log" {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), fields.server, fields.message));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_log_messages_become_tracing_events() {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let subscriber = tracing_subscriber::registry().with(Record(Arc::clone(&seen)));
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let conn = McpToolSource::stdio(FIXTURE, std::iter::empty::<&str>(), [("RUST_LOG", "off")])
        .named("fx")
        // Log notifications during a call are of the 2025-11-25 era.
        .with_era(ProtocolEra::Initialize)
        .connect()
        .await
        .unwrap();
    let result = conn
        .call("test_tool_with_logging", Map::new(), &ToolContext::new())
        .await;
    assert_eq!(result.output, "Tool with logging executed successfully");
    // Notifications may trail the result by a moment.
    let start = std::time::Instant::now();
    while seen.lock().unwrap().len() < 3 && start.elapsed().as_secs() < 30 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (
                tracing::Level::INFO,
                "fx".to_owned(),
                "Tool execution started".to_owned()
            ),
            (
                tracing::Level::INFO,
                "fx".to_owned(),
                "Tool processing data".to_owned()
            ),
            (
                tracing::Level::INFO,
                "fx".to_owned(),
                "Tool execution completed".to_owned()
            ),
        ]
    );
}
