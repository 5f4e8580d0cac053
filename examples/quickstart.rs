//! Quickstart: four tools, the global registry, canonical schemas and real
//! calls, including confirmation (approved, edited, denied), a URL-scoped
//! tool with secrets and a TOTP code, and the statistics.
//!
//! Run with `cargo run -p examples --example quickstart`. Every printed value
//! is also asserted, so this example doubles as a test in CI.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::json;
use tool_core::{
    ApprovalDecision, ApprovalRequest, ErrorKind, SecretStore, ToolContext, ToolRegistry,
    ToolResult, tool,
};

/// An in-memory knowledge base the application puts into the context.
#[derive(Default)]
struct KnowledgeBase {
    notes: Mutex<Vec<Note>>,
}

#[derive(Clone, Debug, Serialize)]
struct Note {
    owner: String,
    content: String,
    types: Vec<String>,
    tags: HashMap<String, String>,
    scopes: Vec<String>,
}

/// What the runner knows about the knowledge base; injected into calls.
#[derive(Serialize)]
struct KnowledgeConfig {
    owner: String,
    default_tags: HashMap<String, String>,
    default_scopes: Vec<String>,
}

/// Save a piece of knowledge to the knowledge base.
///
/// Use when the user states a durable fact worth keeping across sessions.
///
/// # Arguments
/// * `task` - What the agent was doing when it learned this.
/// * `content` - The knowledge itself, one or two sentences.
/// * `types` - Kinds of knowledge, e.g. ["preference", "fact"].
/// * `tags` - Labels as key/value pairs.
/// * `scopes` - Where the knowledge applies, e.g. ["project:apollo"].
#[tool(
    hidden_params = ["context", "owner"],
    inject_params(
        owner(mode = "default", key = "knowledge_config.owner"),
        tags(mode = "merge", key = "knowledge_config.default_tags"),
        scopes(mode = "merge", key = "knowledge_config.default_scopes"),
    ),
    requires_confirmation,
    editable_params = ["content"],
    kind = "write",
    display(zh(name = "保存知识", params(content = "内容")), en(name = "Save knowledge")),
)]
async fn knowledge_save(
    task: String,
    content: String,
    types: Vec<String>,
    tags: Option<HashMap<String, String>>,
    scopes: Option<Vec<String>>,
    owner: Option<String>,
    context: &ToolContext,
) -> ToolResult {
    let Some(kb) = context.state::<KnowledgeBase>() else {
        return ToolResult::failed("no knowledge base is configured");
    };
    let note = Note {
        owner: owner.unwrap_or_else(|| "anonymous".to_owned()),
        content,
        types,
        tags: tags.unwrap_or_default(),
        scopes: scopes.unwrap_or_default(),
    };
    let summary = format!("Saved a note for {} while {task}.", note.owner);
    let Ok(mut notes) = kb.notes.lock() else {
        return ToolResult::failed("the knowledge base is unavailable");
    };
    notes.push(note.clone());
    ToolResult::ok(summary)
        .with_long_term_memory(format!("saved: {}", note.content))
        .with_metadata("scopes", json!(note.scopes))
        .with_metadata("tags", json!(note.tags))
}

/// Search saved notes by words they contain.
///
/// # Arguments
/// * `query` - Words to look for (case-insensitive).
/// * `limit` - Maximum number of notes to return.
#[tool(hidden_params = ["context", "uid"], kind = "read", read_only, concurrency_safe)]
async fn search_notes(
    query: String,
    #[arg(default = 10)] limit: usize,
    context: &ToolContext,
    uid: String,
) -> Result<Vec<String>, String> {
    let kb = context
        .state::<KnowledgeBase>()
        .ok_or_else(|| "no knowledge base is configured".to_owned())?;
    let notes = kb
        .notes
        .lock()
        .map_err(|_| "the knowledge base is unavailable".to_owned())?;
    let needle = query.to_lowercase();
    Ok(notes
        .iter()
        .filter(|n| n.content.to_lowercase().contains(&needle))
        .take(limit)
        .map(|n| format!("[{uid}] {}", n.content))
        .collect())
}

/// Count the words of a text.
///
/// Args:
///     text: The text to count words in.
#[tool(kind = "read", read_only, timeout = "5s")]
fn word_count(text: String) -> usize {
    text.split_whitespace().count()
}

/// Fill the login form of the current page.
///
/// Use `<secret>name</secret>` placeholders for credentials; never ask the user for them.
///
/// # Arguments
/// * `username` - The account name.
/// * `password` - The password (a placeholder).
/// * `otp` - The one-time code (a placeholder), if the page asks for one.
#[tool(url_patterns = ["*.example.com"], kind = "network")]
fn fill_login(username: String, password: String, otp: Option<String>) -> ToolResult {
    // A real tool would type into the page; this one reports what it received.
    let otp_ok = otp
        .as_deref()
        .is_some_and(|c| c.len() == 6 && c.bytes().all(|b| b.is_ascii_digit()));
    ToolResult::ok(format!("Logged in as {username} with password {password}."))
        .with_metadata("otp_was_six_digits", otp_ok)
}

#[tokio::main]
async fn main() {
    let registry = ToolRegistry::global();

    println!("== tools");
    for spec in registry.specs() {
        println!(
            "{:<16} {:<8} {}",
            spec.name,
            spec.kind.as_str(),
            spec.summary()
        );
    }
    assert_eq!(
        registry.names(),
        ["fill_login", "knowledge_save", "search_notes", "word_count"]
    );

    println!("\n== canonical schemas");
    let schemas = registry.schemas();
    println!(
        "{}",
        serde_json::to_string_pretty(&schemas).expect("schemas are JSON")
    );
    let save = &schemas[1]["parameters"];
    assert_eq!(save["required"], json!(["task", "content", "types"]));
    assert!(
        save["properties"].get("owner").is_none(),
        "hidden parameters never reach the model"
    );
    assert!(save["properties"].get("context").is_none());
    assert_eq!(
        save["properties"]["content"]["description"],
        "The knowledge itself, one or two sentences."
    );
    assert_eq!(
        schemas[2]["parameters"]["properties"]["limit"]["default"],
        10
    );
    assert_eq!(
        schemas[3]["parameters"]["properties"]["text"]["description"],
        "The text to count words in."
    );

    let config = KnowledgeConfig {
        owner: "ana".to_owned(),
        default_tags: HashMap::from([("source".to_owned(), "chat".to_owned())]),
        default_scopes: vec!["user".to_owned()],
    };
    // The approver stands in for a person: it approves, edits or denies by content.
    let approver = |request: ApprovalRequest| async move {
        let content = request.arguments["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if content.contains("password") {
            ApprovalDecision::Deny("notes must not hold credentials".to_owned())
        } else if content.ends_with('!') {
            let mut edited = request.arguments.clone();
            edited.insert("content".to_owned(), json!(content.trim_end_matches('!')));
            ApprovalDecision::ApproveWithEdits(edited)
        } else {
            ApprovalDecision::Approve
        }
    };
    let secrets = SecretStore::from_json(&json!({
        "*.example.com": {"shop_password": "correct horse battery", "shop_bu_2fa_code": "JBSWY3DPEHPK3PXP"}
    }))
    .expect("a valid secret store");
    let ctx = ToolContext::new()
        .with_trace_id("quickstart-1")
        .with_uid("u-42")
        .with_config("knowledge_config", &config)
        .with_state(KnowledgeBase::default())
        .with_approver(approver)
        .with_secrets(secrets);

    println!("\n== calls");
    let saved = registry
        .execute(
            "knowledge_save",
            r#"{"task": "planning a trip", "content": "Ana prefers window seats", "types": ["preference"], "tags": {"source": "model", "topic": "travel"}, "scopes": ["travel"]}"#,
            &ctx,
        )
        .await;
    println!("knowledge_save (approved) -> {}", saved.output);
    assert_eq!(saved.output, "Saved a note for ana while planning a trip.");
    // merge: framework keys win, model keys are kept; lists: framework items first.
    assert_eq!(
        saved.metadata["tags"],
        json!({"source": "chat", "topic": "travel"})
    );
    assert_eq!(saved.metadata["scopes"], json!(["user", "travel"]));

    let edited = registry
        .execute(
            "knowledge_save",
            json!({"task": "chatting", "content": "Ana likes tea!", "types": ["preference"]}),
            &ctx,
        )
        .await;
    println!(
        "knowledge_save (edited)   -> {} / memory: {:?}",
        edited.output, edited.long_term_memory
    );
    assert_eq!(
        edited.long_term_memory.as_deref(),
        Some("saved: Ana likes tea")
    );
    assert_eq!(edited.metadata["approved_with_edits"], json!(["content"]));

    let denied = registry
        .execute(
            "knowledge_save",
            json!({"task": "setup", "content": "her password is hunter2", "types": ["fact"]}),
            &ctx,
        )
        .await;
    let error = denied.error.expect("the approver denies credentials");
    println!(
        "knowledge_save (denied)   -> {}: {}",
        error.kind, error.message
    );
    assert_eq!(error.kind, ErrorKind::Denied);

    let found = registry
        .execute("search_notes", json!({"query": "a"}), &ctx)
        .await;
    println!("search_notes   -> {}", found.output);
    assert_eq!(
        found.output,
        r#"["[u-42] Ana prefers window seats","[u-42] Ana likes tea"]"#
    );

    let counted = registry
        .execute("word_count", json!({"text": "one two three"}), &ctx)
        .await;
    println!("word_count     -> {}", counted.output);
    assert_eq!(counted.output, "3");

    println!("\n== a URL-scoped tool with secrets");
    let off_page = registry.tool_names(Some("https://news.example.org/"));
    println!("tools on news.example.org: {off_page:?}");
    assert!(!off_page.contains(&"fill_login"));
    let on_page = ctx.clone().with_page_url("https://shop.example.com/login");
    assert!(
        registry
            .tool_names(on_page.page_url())
            .contains(&"fill_login")
    );
    let login_args = json!({
        "username": "ana",
        "password": "<secret>shop_password</secret>",
        "otp": "<secret>shop_bu_2fa_code</secret>"
    });
    let login = registry
        .execute("fill_login", login_args.clone(), &on_page)
        .await;
    println!("fill_login     -> {}", login.output);
    // The tool received the real password and a fresh TOTP code; the result shows only placeholders.
    assert_eq!(
        login.output,
        "Logged in as ana with password <secret>shop_password</secret>."
    );
    assert_eq!(login.metadata["otp_was_six_digits"], true);
    let elsewhere = registry
        .execute(
            "fill_login",
            login_args,
            &ctx.clone().with_page_url("https://evil.test/"),
        )
        .await;
    println!(
        "fill_login off its pages -> {}",
        elsewhere.error.as_ref().map_or("", |e| e.message.as_str())
    );
    assert_eq!(elsewhere.error.map(|e| e.kind), Some(ErrorKind::Denied));

    println!("\n== mistakes the model can act on");
    let bad = registry
        .execute("search_notes", json!({"query": "x", "limit": "ten"}), &ctx)
        .await;
    let error = bad.error.expect("a wrong type is an error result");
    println!("bad call       -> {}: {}", error.kind, error.message);
    assert_eq!(error.kind, ErrorKind::InvalidArguments);
    assert!(error.message.contains("parameter `limit`"));

    let repaired = registry
        .execute("search_notes", json!({"query": "tea", "limit": "5"}), &ctx)
        .await;
    println!(
        "repaired call  -> {} (repairs: {})",
        repaired.output, repaired.metadata["argument_repairs"]
    );
    assert_eq!(
        repaired.metadata["argument_repairs"],
        json!([{"kind": "integer_from_string", "parameter": "limit"}])
    );

    let unknown = registry.execute("serch_notes", json!({}), &ctx).await;
    let error = unknown.error.expect("an unknown tool is an error result");
    println!("unknown tool   -> {}", error.message);
    assert!(error.message.contains("Did you mean `search_notes`?"));

    println!("\n== statistics");
    for s in registry.stats() {
        println!(
            "{:<16} calls {:>2}  ok {:>2}  failed {:>2}  denied {:>2}  repairs {:>2}  p50 {:?}",
            s.name,
            s.call_count,
            s.success_count,
            s.failure_count,
            s.denials,
            s.argument_repairs,
            s.p50.unwrap_or_default()
        );
    }
    let save_stats = registry.stats_for("knowledge_save").expect("registered");
    assert_eq!(
        (
            save_stats.call_count,
            save_stats.success_count,
            save_stats.denials
        ),
        (3, 2, 1)
    );
}
