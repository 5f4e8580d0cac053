//! What MCP did differently from in-process calls (issue 24), over a real
//! JSON-RPC exchange with `McpServer::serve_transport` on an in-memory pipe:
//! `tools/list` applies the server's page URL as `execute` does; a tool
//! returning a `Serialize` type sends `structuredContent` and lists an
//! `outputSchema`; the server is named after the program; a malformed
//! elicitation answer is a refusal, never the server's own approver.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]
#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tool_core::{ApprovalPolicy, ToolContext, ToolRegistry, tool};
use tool_mcp::McpServer;

/// A price quote.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Quote {
    /// The SKU quoted.
    sku: String,
    /// The price in cents.
    cents: u32,
}

/// Quote a product's price.
#[tool(read_only)]
fn fh_quote(sku: String) -> Quote {
    Quote { sku, cents: 1250 }
}

/// Quote a product's price, or fail.
#[tool(read_only)]
fn fh_try_quote(sku: String) -> Result<Quote, String> {
    if sku.is_empty() {
        return Err("no SKU".to_owned());
    }
    Ok(Quote { sku, cents: 990 })
}

/// Refund an order (admin pages only).
#[tool(url_patterns = ["https://admin.shop.example/**"])]
fn fh_refund(order: String) -> String {
    format!("refunded {order}")
}

/// Open the cart (shop pages only).
#[tool(url_patterns = ["https://shop.example/**"])]
fn fh_cart() -> String {
    "cart".to_owned()
}

/// Delete an order; asks first.
#[tool(requires_confirmation, kind = "write")]
fn fh_delete(order: String) -> String {
    format!("deleted {order}")
}

/// Order an item; asks first, and the person may change the quantity.
#[tool(requires_confirmation, kind = "write", editable_params = ["quantity"])]
fn fh_order(
    sku: String,
    #[arg(description = "How many to order")] quantity: u32,
    #[arg(default = "standard", description = "How to ship it")] shipping: String,
) -> String {
    let _ = shipping;
    format!("{quantity} x {sku}")
}

/// One client speaking raw JSON-RPC lines to a server on an in-memory pipe.
struct Client {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
}

impl Client {
    async fn start(server: McpServer, capabilities: Value) -> (Self, Value) {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(theirs);
        tokio::spawn(server.serve_transport((server_read, server_write)));
        let (read, writer) = tokio::io::split(ours);
        let mut client = Self {
            lines: BufReader::new(read).lines(),
            writer,
        };
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "first-hour", "version": "0"}
                }}),
            )
            .await;
        let init = client.next().await;
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        (client, init)
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message that is not a notification.
    async fn next(&mut self) -> Value {
        loop {
            let line =
                tokio::time::timeout(std::time::Duration::from_secs(20), self.lines.next_line())
                    .await
                    .expect("an answer within 20 s")
                    .unwrap()
                    .expect("the server keeps the stream open");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id").is_some() {
                return v;
            }
        }
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.next().await
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory().unwrap()
}

fn listed(list: &Value) -> Vec<&str> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

#[tokio::test]
async fn tools_list_applies_the_page_url_as_execute_does() {
    let server = McpServer::new(registry())
        .with_context(ToolContext::new().with_page_url("https://shop.example/cart"));
    let (mut client, _) = Client::start(server, json!({})).await;
    let list = client.request(2, "tools/list", json!({})).await;
    let names = listed(&list);
    assert!(names.contains(&"fh_cart"), "{names:?}");
    assert!(!names.contains(&"fh_refund"), "{names:?}");
    // No page at all: only tools without patterns.
    let (mut client, _) = Client::start(McpServer::new(registry()), json!({})).await;
    let names_without_page = listed(&client.request(2, "tools/list", json!({})).await)
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert!(
        !names_without_page
            .iter()
            .any(|n| n == "fh_cart" || n == "fh_refund")
    );
    assert!(names_without_page.iter().any(|n| n == "fh_quote"));
}

#[tokio::test]
async fn serialize_returns_carry_structured_content_and_an_output_schema() {
    let (mut client, _) = Client::start(McpServer::new(registry()), json!({})).await;
    let list = client.request(2, "tools/list", json!({})).await;
    for name in ["fh_quote", "fh_try_quote"] {
        let tool = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        assert_eq!(tool["outputSchema"]["type"], "object", "{name}: {tool}");
        assert_eq!(
            tool["outputSchema"]["properties"]["cents"]["type"], "integer",
            "{name}: {tool}"
        );
    }
    let call = client
        .request(
            3,
            "tools/call",
            json!({"name": "fh_quote", "arguments": {"sku": "MUG-1"}}),
        )
        .await;
    assert_eq!(
        call["result"]["structuredContent"],
        json!({"sku": "MUG-1", "cents": 1250}),
        "{call}"
    );
    let call = client
        .request(
            4,
            "tools/call",
            json!({"name": "fh_try_quote", "arguments": {"sku": "MUG-2"}}),
        )
        .await;
    assert_eq!(
        call["result"]["structuredContent"],
        json!({"sku": "MUG-2", "cents": 990}),
        "{call}"
    );
}

#[tokio::test]
async fn the_server_is_named_after_the_program() {
    let (_, init) = Client::start(McpServer::new(registry()), json!({})).await;
    let exe = std::env::current_exe().unwrap();
    let program = exe.file_stem().unwrap().to_str().unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], program, "{init}");
    assert_ne!(init["result"]["serverInfo"]["name"], "tool-mcp");
    // Told otherwise, it says so.
    let (_, init) = Client::start(
        McpServer::new(registry()).with_server_info("shop", "1.2.3"),
        json!({}),
    )
    .await;
    assert_eq!(
        init["result"]["serverInfo"],
        json!({"name": "shop", "version": "1.2.3"})
    );
}

/// Counts how often the server's own approver is asked (it approves all).
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl tool_core::Approver for Counting {
    fn approve(
        &self,
        _request: tool_core::ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn Future<Output = tool_core::ApprovalDecision> + Send + 'static>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { tool_core::ApprovalDecision::Approve })
    }
}

/// In an `initialize` session (2025-11-25) the confirmation form offers the
/// editable parameters as 2026-07-28's does, and an edit is applied with a
/// note (fourth new-user review, S1: it was dropped silently).
#[tokio::test]
async fn an_edit_in_the_confirmation_form_is_applied_in_the_initialize_era() {
    let server = McpServer::new(registry());
    let (mut client, _) = Client::start(server, json!({"elicitation": {"form": {}}})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
            "params": {"name": "fh_order", "arguments": {"sku": "MUG-1", "quantity": 2}}}))
        .await;
    let ask = client.next().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let schema = &ask["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["quantity"]["type"], "integer", "{ask}");
    assert_eq!(schema["properties"]["quantity"]["default"], 2, "{ask}");
    assert_eq!(schema["required"], json!(["approve"]), "{ask}");
    let message = ask["params"]["message"].as_str().unwrap();
    assert!(message.ends_with("You may change: quantity."), "{message}");
    client
        .send(json!({"jsonrpc": "2.0", "id": ask["id"].clone(),
            "result": {"action": "accept", "content": {"approve": true, "quantity": 5}}}))
        .await;
    let result = client.next().await;
    assert_eq!(result["id"], 30, "{result}");
    assert_eq!(result["result"]["isError"], false, "{result}");
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("5 x MUG-1"), "{text}");
    assert!(text.contains("edited it first"), "{text}");
}

/// Answers the confirmation of `fh_order {sku: MUG-1, quantity: 2}` with
/// `content` and returns the call's result (its text, and `isError`).
async fn order_answered(content: Value) -> (String, bool, Value) {
    let server = McpServer::new(registry());
    let (mut client, _) = Client::start(server, json!({"elicitation": {"form": {}}})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call",
            "params": {"name": "fh_order", "arguments": {"sku": "MUG-1", "quantity": 2}}}))
        .await;
    let ask = client.next().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    client
        .send(json!({"jsonrpc": "2.0", "id": ask["id"].clone(),
            "result": {"action": "accept", "content": content}}))
        .await;
    let result = client.next().await;
    assert_eq!(result["id"], 40, "{result}");
    let text = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    (text, result["result"]["isError"] == true, ask)
}

/// Review 24, findings 12-13: the form's field carries the parameter's
/// constraints and description; a person's invalid edit is reported as the
/// person's, with the call not made; an answer changing a field the form
/// did not offer refuses the call instead of being dropped unseen.
#[tokio::test]
async fn the_persons_edit_is_checked_and_reported_as_theirs() {
    let (text, is_error, ask) = order_answered(json!({"approve": true, "quantity": -5})).await;
    let field = &ask["params"]["requestedSchema"]["properties"]["quantity"];
    assert_eq!(
        field,
        &json!({"type": "integer", "description": "How many to order", "minimum": 0, "default": 2}),
        "{ask}"
    );
    let message = ask["params"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "Allow the tool `fh_order` (write) to run with these arguments?\n{\"sku\":\"MUG-1\",\"quantity\":2}\n\
         the tool's defaults for the rest: {\"shipping\":\"standard\"}\nYou may change: quantity."
    );
    assert!(is_error, "{text}");
    assert_eq!(
        text,
        "Error: The person approving `fh_order` edited the call (`quantity` set to -5), and the edited arguments are not valid: \
         Invalid value for parameter `quantity` of `fh_order`: expected an integer of at least 0, but received an integer -5. \
         The call was not made. The arguments you sent were not changed; calling again asks the person again."
    );
    assert!(!text.contains("ran with"), "{text}");

    let (text, is_error, _) = order_answered(json!({"approve": true, "sku": "TEE-2"})).await;
    assert!(is_error, "{text}");
    assert_eq!(
        text,
        "Error: The call to `fh_order` was not approved: the answer changes `sku`, which the confirmation does not let the person change (only `quantity` may be changed), so the call was not made"
    );
    // The same value sent back is no change; a valid edit runs with its note.
    let (text, is_error, _) =
        order_answered(json!({"approve": true, "sku": "MUG-1", "quantity": 3})).await;
    assert!(!is_error, "{text}");
    assert!(text.starts_with("3 x MUG-1"), "{text}");
    assert!(text.contains("it ran with the edited arguments"), "{text}");
}

#[tokio::test]
async fn a_malformed_elicitation_answer_is_a_refusal() {
    let _ = ApprovalPolicy::new();
    let fallback = Counting::default();
    let server =
        McpServer::new(registry()).with_context(ToolContext::new().with_approver(fallback.clone()));
    let (mut client, _) = Client::start(server, json!({"elicitation": {"form": {}}})).await;
    for (id, content) in [(10, json!({"approve": "yes"})), (20, Value::Null)] {
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "fh_delete", "arguments": {"order": "o-1"}}}))
            .await;
        // The server asks the client ...
        let ask = client.next().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        // ... which accepts with content that is not the form.
        let mut answer = json!({"action": "accept"});
        if !content.is_null() {
            answer["content"] = content;
        }
        client
            .send(json!({"jsonrpc": "2.0", "id": ask["id"].clone(), "result": answer}))
            .await;
        let result = client.next().await;
        assert_eq!(result["id"], id, "{result}");
        assert_eq!(result["result"]["isError"], true, "{result}");
        let text = result["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("was not made"), "{text}");
    }
    assert_eq!(fallback.0.load(Ordering::SeqCst), 0, "the fallback decided");
}

#[tokio::test]
async fn an_unknown_tool_gets_the_did_you_mean_and_the_valid_names() {
    let server = McpServer::new(registry())
        .with_context(ToolContext::new().with_page_url("https://shop.example/cart"));
    let (mut client, _) = Client::start(server, json!({})).await;
    let answer = client
        .request(
            2,
            "tools/call",
            json!({"name": "fh_qoute", "arguments": {}}),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32602);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("unknown tool: fh_qoute. Did you mean `fh_quote`"),
        "{message}"
    );
    // Nothing close: the names offered on the page, which leave out
    // `fh_refund` (another page's tool).
    let answer = client
        .request(3, "tools/call", json!({"name": "zzzz", "arguments": {}}))
        .await;
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("unknown tool: zzzz. Available tools: "),
        "{message}"
    );
    assert!(message.contains("fh_cart"), "{message}");
    assert!(!message.contains("fh_refund"), "{message}");
}
