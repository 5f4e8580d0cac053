//! Prompts, resources, resource templates, subscriptions and completions
//! (issue 26), through rmcp's own client: against an in-process
//! [`McpServer`] with a catalog built at run time, and against the fixture
//! server (a child process) whose catalog is declared with `#[prompt]` /
//! `#[resource]`. The macros are also used in this file, for
//! [`Catalog::declared`].

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]
#![allow(
    deprecated,
    reason = "resources/subscribe is the 2025-11-25 way of subscribing, tested here"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::ToolRegistry;
use tool_mcp::catalog::Arguments;
use tool_mcp::rmcp::model::{
    ClientRequest, CustomRequest, GetPromptRequestParams, ReadResourceRequestParams, Role,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use tool_mcp::rmcp::service::{NotificationContext, RunningService};
use tool_mcp::rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use tool_mcp::{
    Catalog, Completer, McpServer, Prompt, Resource, ResourceTemplate, prompt, resource,
};

/// What the client heard from the server.
#[derive(Clone, Default)]
struct Heard {
    updated: Arc<Mutex<Vec<String>>>,
    prompt_lists: Arc<Mutex<usize>>,
    resource_lists: Arc<Mutex<usize>>,
}

impl ClientHandler for Heard {
    async fn on_resource_updated(
        &self,
        params: tool_mcp::rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.prompt_lists.lock().unwrap() += 1;
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.resource_lists.lock().unwrap() += 1;
    }
}

async fn wait_for(mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// A catalog built with the run-time API.
fn runtime_catalog() -> Catalog {
    let catalog = Catalog::new();
    catalog.add_resource(
        Resource::text("memo://today", "today", "Buy milk.")
            .with_mime_type("text/plain")
            .with_description("Today's memo."),
    );
    catalog.add_resource(Resource::blob(
        "memo://logo",
        "logo",
        vec![0x89_u8, b'P', b'N', b'G'],
    ));
    catalog.add_template(
        ResourceTemplate::new(
            "memo://days/{day}",
            "day",
            |uri, vars: Arguments| async move {
                if vars["day"] == "never" {
                    return Err(format!("no memo for {uri}"));
                }
                Ok(format!("memo of {}", vars["day"]))
            },
        )
        .unwrap()
        .with_completion("day", Completer::from_values(["monday", "tuesday", "mars"])),
    );
    catalog.add_prompt(
        Prompt::new("plan", "Plans a trip.", |args: Arguments| async move {
            let days = args.get("days").map_or("a few", String::as_str);
            Ok::<_, String>(vec![tool_mcp::rmcp::model::PromptMessage::new_text(
                Role::User,
                format!("Plan {days} days in {}.", args["city"]),
            )])
        })
        .with_argument("city", "Where to.", true)
        .with_argument("days", "How long.", false)
        .with_completion(
            "city",
            Completer::from_values(["paris", "park city", "lyon"]),
        ),
    );
    catalog
}

async fn connect(server: McpServer) -> (RunningService<RoleClient, Heard>, Heard) {
    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    tokio::spawn(server.serve_transport(tokio::io::split(server_side)));
    let heard = Heard::default();
    let client = heard
        .clone()
        .serve(tokio::io::split(client_side))
        .await
        .expect("client connects");
    (client, heard)
}

fn mcp_error(e: ServiceError) -> (i32, String, Option<Value>) {
    match e {
        ServiceError::McpError(e) => (e.code.0, e.message.to_string(), e.data),
        other => panic!("not an MCP error: {other}"),
    }
}

#[tokio::test]
async fn resources_prompts_and_completions_at_run_time() {
    let catalog = runtime_catalog();
    let server = McpServer::new(ToolRegistry::new()).with_catalog(catalog.clone());
    let (client, heard) = connect(server).await;
    let peer = client.peer();

    let caps = peer.peer_info().unwrap().capabilities.clone();
    assert!(caps.prompts.is_some() && caps.resources.is_some() && caps.completions.is_some());
    assert_eq!(caps.resources.unwrap().subscribe, Some(true));

    let resources = peer.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["memo://today", "memo://logo"]);
    assert_eq!(resources[0].description.as_deref(), Some("Today's memo."));

    let text = peer
        .read_resource(ReadResourceRequestParams::new("memo://today"))
        .await
        .unwrap();
    let text = serde_json::to_value(&text.contents).unwrap();
    assert_eq!(
        text,
        json!([{"uri": "memo://today", "mimeType": "text/plain", "text": "Buy milk."}])
    );
    let blob = peer
        .read_resource(ReadResourceRequestParams::new("memo://logo"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&blob.contents).unwrap()[0]["blob"],
        "iVBORw=="
    );

    let templates = peer.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "memo://days/{day}");
    let day = peer
        .read_resource(ReadResourceRequestParams::new("memo://days/friday"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&day.contents).unwrap()[0]["text"],
        "memo of friday"
    );

    // Unknown URI: resource-not-found with the URI in `data` (SEP-2164);
    // a failing read: an internal error with the read's own message.
    let (code, message, data) = mcp_error(
        peer.read_resource(ReadResourceRequestParams::new("memo://nothing"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (-32002, "Resource not found: memo://nothing")
    );
    assert_eq!(data, Some(json!({"uri": "memo://nothing"})));
    let (code, message, _) = mcp_error(
        peer.read_resource(ReadResourceRequestParams::new("memo://days/never"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (-32603, "no memo for memo://days/never")
    );

    let prompts = peer.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1);
    let args = prompts[0].arguments.clone().unwrap();
    assert_eq!(
        args.iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect::<Vec<_>>(),
        [("city", Some(true)), ("days", Some(false))]
    );
    let got = peer
        .get_prompt(
            GetPromptRequestParams::new("plan").with_arguments(
                serde_json::from_value(json!({"city": "Lyon", "days": "3"})).unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&got.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text": "Plan 3 days in Lyon."}}])
    );
    assert_eq!(got.description.as_deref(), Some("Plans a trip."));
    let (code, message, _) = mcp_error(
        peer.get_prompt(GetPromptRequestParams::new("plan"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (-32602, "prompt `plan` needs the argument `city`")
    );
    let (code, message, _) = mcp_error(
        peer.get_prompt(GetPromptRequestParams::new("nope"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (-32602, "unknown prompt: nope (prompts: plan)")
    );

    let cities = peer
        .complete_prompt_argument("plan", "city", "pa", None)
        .await
        .unwrap();
    assert_eq!(cities.values, ["paris", "park city"]);
    assert_eq!((cities.total, cities.has_more), (Some(2), Some(false)));
    let days = peer
        .complete_resource_argument("memo://days/{day}", "day", "m", None)
        .await
        .unwrap();
    assert_eq!(days.values, ["monday", "mars"]);
    // An argument without a completer: no suggestions.
    let none = peer
        .complete_prompt_argument("plan", "days", "", None)
        .await
        .unwrap();
    assert!(none.values.is_empty());

    // Subscriptions: only subscribed URIs are announced, in order.
    peer.subscribe(SubscribeRequestParams::new("memo://today"))
        .await
        .unwrap();
    peer.subscribe(SubscribeRequestParams::new("memo://days/monday"))
        .await
        .unwrap();
    let (code, _, data) = mcp_error(
        peer.subscribe(SubscribeRequestParams::new("memo://nothing"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, data),
        (-32002, Some(json!({"uri": "memo://nothing"})))
    );
    catalog.notify_updated("memo://logo");
    catalog.notify_updated("memo://today");
    assert!(wait_for(|| heard.updated.lock().unwrap().len() == 1).await);
    peer.unsubscribe(UnsubscribeRequestParams::new("memo://today"))
        .await
        .unwrap();
    catalog.notify_updated("memo://today");
    catalog.notify_updated("memo://days/monday");
    assert!(wait_for(|| heard.updated.lock().unwrap().len() == 2).await);
    assert_eq!(
        *heard.updated.lock().unwrap(),
        ["memo://today", "memo://days/monday"]
    );

    // List changes reach the client.
    catalog.add_prompt(Prompt::new("other", "Another.", |_| async {
        Ok::<_, String>(Vec::new())
    }));
    assert!(wait_for(|| *heard.prompt_lists.lock().unwrap() >= 1).await);
    assert!(catalog.remove_resource("memo://logo"));
    assert!(wait_for(|| *heard.resource_lists.lock().unwrap() >= 1).await);
    assert_eq!(peer.list_all_resources().await.unwrap().len(), 1);

    // A method nobody serves.
    let (code, message, _) = mcp_error(
        peer.send_request(ClientRequest::CustomRequest(CustomRequest::new(
            "widgets/spin",
            None,
        )))
        .await
        .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (-32601, "Method not found: widgets/spin")
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_server_without_a_catalog_still_declares_empty_lists() {
    let (client, _) = connect(McpServer::new(ToolRegistry::new())).await;
    let peer = client.peer();
    let caps = peer.peer_info().unwrap().capabilities.clone();
    assert!(caps.prompts.is_some() && caps.resources.is_some());
    assert!(peer.list_all_prompts().await.unwrap().is_empty());
    assert!(peer.list_all_resources().await.unwrap().is_empty());
    assert!(peer.list_all_resource_templates().await.unwrap().is_empty());
    client.cancel().await.unwrap();
}

/// Greets someone by name.
///
/// # Arguments
/// * `name` - Whom to greet.
/// * `tone` - How (default: warmly).
#[prompt(title = "Greeting")]
fn greet(name: String, tone: Option<String>) -> String {
    format!("Greet {name} {}.", tone.as_deref().unwrap_or("warmly"))
}

/// A shelf of the library.
#[resource("library://shelves/{shelf}/books", mime_type = "application/json")]
async fn shelf(shelf: String) -> Result<String, std::io::Error> {
    Ok(json!({"shelf": shelf, "books": 3}).to_string())
}

/// The opening hours.
#[resource("library://hours", name = "hours")]
fn opening_hours() -> String {
    "9 to 5".to_owned()
}

#[tokio::test]
async fn declared_prompts_and_resources_come_from_the_macros() {
    let catalog = Catalog::declared().unwrap();
    assert_eq!(catalog.prompt_names(), ["greet"]);
    let (client, _) = connect(McpServer::new(ToolRegistry::new()).with_catalog(catalog)).await;
    let peer = client.peer();
    let prompts = serde_json::to_value(peer.list_all_prompts().await.unwrap()).unwrap();
    assert_eq!(
        prompts,
        json!([{
            "name": "greet",
            "title": "Greeting",
            "description": "Greets someone by name.",
            "arguments": [
                {"name": "name", "description": "Whom to greet.", "required": true},
                {"name": "tone", "description": "How (default: warmly).", "required": false}
            ]
        }])
    );
    let got = peer
        .get_prompt(
            GetPromptRequestParams::new("greet")
                .with_arguments(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&got.messages).unwrap()[0]["content"]["text"],
        "Greet Ada warmly."
    );
    let resources = serde_json::to_value(peer.list_all_resources().await.unwrap()).unwrap();
    assert_eq!(
        resources,
        json!([{"uri": "library://hours", "name": "hours", "description": "The opening hours."}])
    );
    let templates =
        serde_json::to_value(peer.list_all_resource_templates().await.unwrap()).unwrap();
    assert_eq!(
        templates,
        json!([{
            "uriTemplate": "library://shelves/{shelf}/books",
            "name": "shelf",
            "description": "A shelf of the library.",
            "mimeType": "application/json"
        }])
    );
    let read = peer
        .read_resource(ReadResourceRequestParams::new(
            "library://shelves/poetry/books",
        ))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents).unwrap()[0]["text"],
        r#"{"shelf":"poetry","books":3}"#
    );
    client.cancel().await.unwrap();
}

/// The fixture (a child process, stdio) serves the conformance suite's
/// catalog: a subscriber hears of `test://watched-resource` when the
/// `touch_watched` tool runs.
#[tokio::test]
async fn fixture_catalog_over_stdio_with_a_subscription() {
    use tool_mcp::rmcp::transport::TokioChildProcess;
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tool-mcp-fixture"));
    command.env("RUST_LOG", "off");
    let heard = Heard::default();
    let client = heard
        .clone()
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap();
    let peer = client.peer();
    let image = peer
        .get_prompt(GetPromptRequestParams::new("test_prompt_with_image"))
        .await
        .unwrap();
    let image = serde_json::to_value(&image.messages).unwrap();
    assert_eq!(image[0]["content"]["type"], "image");
    assert_eq!(image[0]["content"]["mimeType"], "image/png");
    let data = peer
        .read_resource(ReadResourceRequestParams::new("test://template/123/data"))
        .await
        .unwrap();
    let text = serde_json::to_value(&data.contents).unwrap()[0]["text"].clone();
    let parsed: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    assert_eq!(
        parsed,
        json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
    );
    let completion = peer
        .complete_prompt_argument("test_prompt_with_arguments", "arg1", "par", None)
        .await
        .unwrap();
    assert_eq!(completion.values, ["paris", "park", "party"]);
    peer.subscribe(SubscribeRequestParams::new("test://watched-resource"))
        .await
        .unwrap();
    let touched = peer
        .call_tool(tool_mcp::rmcp::model::CallToolRequestParams::new(
            "touch_watched",
        ))
        .await
        .unwrap();
    assert_eq!(touched.is_error, Some(false));
    assert!(wait_for(|| !heard.updated.lock().unwrap().is_empty()).await);
    assert_eq!(*heard.updated.lock().unwrap(), ["test://watched-resource"]);
    client.cancel().await.unwrap();
}
