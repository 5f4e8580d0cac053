//! Execution governance: URL scoping, secrets, confirmation, argument repair,
//! statistics, events, output budget, two-layer memory, batches.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tool_core::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, CallPhase, ErrorKind, SecretStore,
    StatsOrder, ToolContext, ToolEvent, ToolHistory, ToolKind, ToolRegistry, ToolResult, tool,
    truncate::Truncation,
};

/// Post a comment on a GitHub issue.
#[tool(url_patterns = ["https://github.com/**/issues/*", "*.github.com"], kind = "network")]
fn gov_comment(body: String) -> String {
    format!("posted: {body}")
}

/// Log in with a password and a one-time code; echoes what it received.
#[tool(url_patterns = ["*.example.com"])]
fn gov_login(user: String, password: String, otp: Option<String>) -> ToolResult {
    ToolResult::ok(format!(
        "user={user} password={password} otp={}",
        otp.clone().unwrap_or_default()
    ))
    .with_title(format!("login as {user} with {password}"))
    .with_long_term_memory(format!("logged in with {password}"))
    .with_metadata(
        "echo",
        json!({"nested": [password.clone()], password.clone(): otp}),
    )
}

/// Echo a secret into an attachment name, and take a number.
#[tool]
fn gov_reflect(text: String, n: Option<u32>) -> ToolResult {
    ToolResult::ok("done")
        .with_attachment(tool_core::Attachment::inline(
            format!("name-{text}"),
            "text/plain",
            "AA==",
        ))
        .with_metadata("n", n)
}

/// Save a note for its owner (hidden).
#[tool(requires_confirmation, editable_params = ["text"], hidden_params = ["owner"])]
fn gov_owned_note(text: String, owner: Option<String>) -> String {
    format!("{text} by {}", owner.unwrap_or_else(|| "nobody".into()))
}

/// Send an email.
#[tool(requires_confirmation, editable_params = ["body"], kind = "write", display(en(name = "Send email")))]
fn gov_send(to: String, body: String) -> String {
    format!("sent to {to}: {body}")
}

/// Take typed parameters for repair tests.
#[tool]
fn gov_typed(
    count: u32,
    flag: Option<bool>,
    tags: Option<Vec<String>>,
    note: Option<String>,
) -> Value {
    json!({"count": count, "flag": flag, "tags": tags, "note": note})
}

/// Produce a lot of output.
#[tool(read_only, concurrency_safe)]
async fn gov_big(lines: usize) -> String {
    (0..lines).map(|i| format!("line {i}\n")).collect()
}

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MAX_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Returns long output that names where its full text is.
#[tool]
fn gov_self_truncated() -> ToolResult {
    let text: String = (0..1000).map(|i| format!("row {i}\n")).collect();
    ToolResult::ok(text).with_metadata("output_path", "/var/tmp/full-output.txt")
}

/// Sleep, read-only; records how many calls overlap.
#[tool(read_only, concurrency_safe)]
async fn gov_read_sleep(ms: u64) -> String {
    let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
    MAX_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    format!("slept {ms}")
}

/// Record an order of calls, not concurrency safe.
#[tool]
async fn gov_write_mark(mark: String) -> String {
    mark
}

/// Standalone base64 (standard and URL-safe, padded and not) and hex (lower
/// and upper case) of `value`: written here by hand, apart from the code
/// under test.
fn encodings(value: &str) -> Vec<String> {
    fn base64(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.len();
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let word = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                if i <= n {
                    out.push(char::from(alphabet[((word >> (18 - 6 * i)) & 63) as usize]));
                } else if pad {
                    out.push('=');
                }
            }
        }
        out
    }
    const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let bytes = value.as_bytes();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    vec![
        base64(bytes, STD, true),
        base64(bytes, STD, false),
        base64(bytes, URL, true),
        base64(bytes, URL, false),
        hex.to_ascii_uppercase(),
        hex,
    ]
}

/// Return `secret` encoded in every standalone form masking covers, in
/// every field masking covers (or as an error message with `fail`).
#[tool]
fn gov_encoded(secret: String, fail: Option<bool>) -> ToolResult {
    let forms = encodings(&secret);
    let joined = forms.join(" ");
    if fail == Some(true) {
        return ToolResult::error(ErrorKind::Failed, format!("could not send {joined}"));
    }
    let keyed: Map<String, Value> = forms.iter().map(|f| (f.clone(), json!(f))).collect();
    ToolResult::ok(format!("sent {joined}"))
        .with_title(format!("sending {joined}"))
        .with_long_term_memory(format!("sent {joined}"))
        .with_metadata("forms", json!({"list": forms, "keyed": keyed}))
        .with_attachment(tool_core::Attachment::inline(
            format!("{}.txt", forms[0]),
            "text/plain",
            "AA==",
        ))
}

fn registry() -> ToolRegistry {
    ToolRegistry::global().clone()
}

#[tokio::test]
async fn url_scoped_tools_are_listed_and_refused_by_page() {
    let r = ToolRegistry::global();
    let on_issue = r.tool_names(Some("https://github.com/org/repo/issues/7"));
    assert!(on_issue.contains(&"gov_comment"));
    assert!(!on_issue.contains(&"gov_login"));
    assert!(
        on_issue.contains(&"gov_typed"),
        "tools without patterns are everywhere"
    );
    let nowhere = r.tool_names(None);
    assert!(!nowhere.contains(&"gov_comment") && nowhere.contains(&"gov_typed"));
    assert!(
        r.tool_names(Some("https://api.github.com/x"))
            .contains(&"gov_comment")
    );
    assert!(
        !r.tool_names(Some("https://github.com/org/repo/pulls/7"))
            .contains(&"gov_comment")
    );
    assert!(
        !r.tool_names(Some("https://docs.github.com@evil.test/"))
            .contains(&"gov_comment")
    );
    let schemas = r.schemas_for_url(Some("https://shop.example.com/login"));
    assert!(schemas.iter().any(|s| s["name"] == "gov_login"));
    assert!(!schemas.iter().any(|s| s["name"] == "gov_comment"));

    let ctx = ToolContext::new().with_page_url("https://gitlab.com/x/issues/1");
    let res = r.execute("gov_comment", json!({"body": "hi"}), &ctx).await;
    let e = res.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Denied);
    assert!(
        e.message.contains("not available on this page"),
        "{}",
        e.message
    );
    let ok = r
        .execute(
            "gov_comment",
            json!({"body": "hi"}),
            &ctx.with_page_url("https://github.com/a/b/issues/3"),
        )
        .await;
    assert_eq!(ok.output, "posted: hi");
}

fn secrets() -> SecretStore {
    SecretStore::from_json(&json!({
        "admin_user": "root-admin",
        "*.example.com": {"pw": "hunter2-password", "site_bu_2fa_code": "JBSWY3DPEHPK3PXP"},
        "*.other.org": {"other_pw": "other-secret-value"}
    }))
    .unwrap()
}

/// Captures everything `tracing` writes.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn secrets_are_substituted_and_never_leak() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::FULL)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&events);
    let requests: Arc<Mutex<Vec<String>>> = Arc::default();
    let req_sink = Arc::clone(&requests);
    let registry = registry().with_observer(move |e: &ToolEvent<'_>| {
        sink.lock()
            .unwrap()
            .push(format!("{:?} {:?} {:?}", e.phase, e.arguments, e.error));
    });
    let ctx = ToolContext::new()
        .with_page_url("https://login.example.com/")
        .with_secrets(secrets())
        .with_approver(move |r: ApprovalRequest| {
            req_sink
                .lock()
                .unwrap()
                .push(serde_json::to_string(&r).unwrap());
            async { ApprovalDecision::Approve }
        });
    let res = registry
        .execute(
            "gov_login",
            json!({"user": "<secret>admin_user</secret>", "password": "<secret>pw</secret>", "otp": "<secret>site_bu_2fa_code</secret>"}),
            &ctx,
        )
        .await;
    assert!(res.is_ok(), "{:?}", res.error);
    // The tool received the real values (its output proves it by shape), and they were masked back.
    assert!(res.output.starts_with("user=<secret>admin_user</secret> password=<secret>pw</secret> otp=<secret>site_bu_2fa_code</secret>"), "{}", res.output);
    assert_eq!(
        res.title.as_deref(),
        Some("login as <secret>admin_user</secret> with <secret>pw</secret>")
    );
    assert_eq!(
        res.long_term_memory.as_deref(),
        Some("logged in with <secret>pw</secret>")
    );
    let all = serde_json::to_string(&res).unwrap();

    // A confirmation request also only sees placeholders.
    let sent = registry
        .execute(
            "gov_send",
            json!({"to": "<secret>admin_user</secret>", "body": "hi"}),
            &ctx,
        )
        .await;
    assert_eq!(sent.output, "sent to <secret>admin_user</secret>: hi");

    let stats = serde_json::to_string(&registry.stats()).unwrap();
    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    let events = events.lock().unwrap().join("\n");
    let requests = requests.lock().unwrap().join("\n");
    assert!(logs.contains("tool_call"), "the span was recorded: {logs}");
    assert!(
        requests.contains("<secret>admin_user</secret>"),
        "{requests}"
    );
    for secret in [
        "root-admin",
        "hunter2-password",
        "JBSWY3DPEHPK3PXP",
        "other-secret-value",
    ] {
        for (what, text) in [
            ("result", &all),
            ("stats", &stats),
            ("logs", &logs),
            ("events", &events),
            ("approval", &requests),
        ] {
            assert!(
                !text.contains(secret),
                "{secret} leaked into {what}: {text}"
            );
        }
    }
}

#[tokio::test]
async fn secret_errors_do_not_reveal_values_and_placeholders_never_pass_through() {
    let r = ToolRegistry::global();
    let ctx = ToolContext::new()
        .with_page_url("https://login.example.com/")
        .with_secrets(secrets());
    let res = r
        .execute(
            "gov_login",
            json!({"user": "u", "password": "<secret>other_pw</secret>"}),
            &ctx,
        )
        .await;
    let e = res.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(
        e.message.contains("`other_pw` is not allowed on this page"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("other-secret-value") && !e.message.contains("hunter2"));
    let res = r
        .execute(
            "gov_login",
            json!({"user": "u", "password": "<secret>nope</secret>"}),
            &ctx,
        )
        .await;
    assert!(res.error.unwrap().message.contains("`nope` does not exist"));
    let bare = ToolContext::new().with_page_url("https://login.example.com/");
    let res = r
        .execute(
            "gov_login",
            json!({"user": "u", "password": "<secret>pw</secret>"}),
            &bare,
        )
        .await;
    assert!(
        res.error
            .unwrap()
            .message
            .contains("no secrets are configured")
    );
}

#[tokio::test]
async fn confirmation_approve_edit_deny_and_fail_closed() {
    let r = ToolRegistry::global();
    let args = json!({"to": "bob", "body": "draft"});

    let none = r
        .execute("gov_send", args.clone(), &ToolContext::new())
        .await;
    let e = none.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Denied);
    assert!(
        e.message.contains("no approver is configured"),
        "{}",
        e.message
    );

    let seen: Arc<Mutex<Option<ApprovalRequest>>> = Arc::default();
    let s = Arc::clone(&seen);
    let approve = ToolContext::new().with_approver(move |req: ApprovalRequest| {
        *s.lock().unwrap() = Some(req);
        async { ApprovalDecision::Approve }
    });
    assert_eq!(
        r.execute("gov_send", args.clone(), &approve).await.output,
        "sent to bob: draft"
    );
    let req = seen.lock().unwrap().clone().unwrap();
    assert_eq!(req.tool, "gov_send");
    assert_eq!(req.kind, ToolKind::Write);
    assert_eq!(req.editable_params, ["body"]);
    assert_eq!(req.display["en"].name.as_deref(), Some("Send email"));
    assert_eq!(Value::Object(req.arguments), args);

    let edit = ToolContext::new().with_approver(|req: ApprovalRequest| async move {
        let mut a: Map<String, Value> = req.arguments;
        a.insert("body".into(), json!("final text"));
        ApprovalDecision::ApproveWithEdits(a)
    });
    let res = r.execute("gov_send", args.clone(), &edit).await;
    assert_eq!(res.output, "sent to bob: final text");
    assert_eq!(res.metadata["approved_with_edits"], json!(["body"]));

    let sneaky = ToolContext::new().with_approver(|req: ApprovalRequest| async move {
        let mut a = req.arguments;
        a.insert("to".into(), json!("mallory"));
        ApprovalDecision::ApproveWithEdits(a)
    });
    let e = r
        .execute("gov_send", args.clone(), &sneaky)
        .await
        .error
        .unwrap();
    assert_eq!(e.kind, ErrorKind::Denied);
    assert!(
        e.message.contains("changed `to`, which is not editable"),
        "{}",
        e.message
    );

    let deny = ToolContext::new()
        .with_approver(|_: ApprovalRequest| async { ApprovalDecision::Deny("not now".into()) });
    let e = r
        .execute("gov_send", args.clone(), &deny)
        .await
        .error
        .unwrap();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            ErrorKind::Denied,
            "The call to `gov_send` was not approved: not now"
        )
    );

    let policy =
        ToolContext::new().with_approver(ApprovalPolicy::new().auto_approve(ToolKind::Write));
    assert!(r.execute("gov_send", args.clone(), &policy).await.is_ok());
    let policy =
        ToolContext::new().with_approver(ApprovalPolicy::new().auto_approve(ToolKind::Read));
    assert_eq!(
        r.execute("gov_send", args, &policy)
            .await
            .error
            .unwrap()
            .kind,
        ErrorKind::Denied
    );
}

#[tokio::test]
async fn argument_repairs_are_recorded_and_limited() {
    let registry = ToolRegistry::from_inventory().unwrap();
    let ctx = ToolContext::new();
    let res = registry.execute("gov_typed", r#""{\"count\": \"7\", \"flag\": \"true\", \"tags\": \"[\\\"a\\\"]\", \"note\": \"{\\\"x\\\":1}\"}""#, &ctx).await;
    assert!(res.is_ok(), "{:?}", res.error);
    assert_eq!(
        res.output,
        r#"{"count":7,"flag":true,"tags":["a"],"note":"{\"x\":1}"}"#
    );
    let kinds: Vec<&str> = res.metadata["argument_repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "double_encoded_arguments",
            "integer_from_string",
            "boolean_from_string",
            "json_string_parsed"
        ]
    );

    let res = registry
        .execute("gov_typed", json!({"parameters": {"count": 1}}), &ctx)
        .await;
    assert_eq!(
        res.metadata["argument_repairs"],
        json!([{"kind": "unwrapped_arguments", "parameter": "parameters"}])
    );
    let res = registry.execute("gov_big", "", &ctx).await;
    let e = res.error.unwrap();
    assert!(
        e.message.contains("Missing required parameter `lines`"),
        "{}",
        e.message
    );

    for bad in ["12abc", "1.5"] {
        let e = registry
            .execute("gov_typed", json!({"count": bad}), &ctx)
            .await
            .error
            .unwrap();
        assert!(
            e.message.contains("parameter `count`") && e.message.contains("an integer"),
            "{}",
            e.message
        );
    }
    let stats = registry.stats_for("gov_typed").unwrap();
    assert_eq!(stats.argument_repairs, 5);
}

#[tokio::test]
async fn statistics_and_lifecycle_events() {
    let phases: Arc<Mutex<Vec<(String, CallPhase)>>> = Arc::default();
    let sink = Arc::clone(&phases);
    let mut fresh = ToolRegistry::from_inventory().unwrap();
    fresh = fresh.with_observer(move |e: &ToolEvent<'_>| {
        sink.lock().unwrap().push((e.tool.to_owned(), e.phase));
    });
    let ctx = ToolContext::new();
    for _ in 0..3 {
        assert!(
            fresh
                .execute("gov_typed", json!({"count": 1}), &ctx)
                .await
                .is_ok()
        );
    }
    assert!(
        fresh
            .execute("gov_typed", json!({"count": "x"}), &ctx)
            .await
            .is_error()
    );
    assert!(
        fresh
            .execute("gov_send", json!({"to": "a", "body": "b"}), &ctx)
            .await
            .is_error()
    );

    let s = fresh.stats_for("gov_typed").unwrap();
    assert_eq!((s.call_count, s.success_count, s.failure_count), (4, 3, 1));
    assert!((s.success_rate - 0.75).abs() < 1e-9);
    assert!(s.p50.is_some() && s.p95.is_some() && s.last_called.is_some());
    let send = fresh.stats_for("gov_send").unwrap();
    assert_eq!(send.denials, 1);
    let top = fresh.top_tools(1, StatsOrder::CallCount);
    assert_eq!(top[0].name, "gov_typed");
    let by_rate = fresh.top_tools(5, StatsOrder::SuccessRate);
    assert_eq!(by_rate.last().unwrap().name, "gov_send");

    let phases = phases.lock().unwrap().clone();
    let typed: Vec<CallPhase> = phases
        .iter()
        .filter(|(t, _)| t == "gov_typed")
        .map(|(_, p)| *p)
        .take(3)
        .collect();
    assert_eq!(
        typed,
        [CallPhase::Pending, CallPhase::Running, CallPhase::Succeeded]
    );
    let send: Vec<CallPhase> = phases
        .iter()
        .filter(|(t, _)| t == "gov_send")
        .map(|(_, p)| *p)
        .collect();
    assert_eq!(send, [CallPhase::Pending, CallPhase::Denied]);
}

#[tokio::test]
async fn concurrent_calls_all_count() {
    let registry = Arc::new(ToolRegistry::from_inventory().unwrap());
    let mut handles = Vec::new();
    for _ in 0..8 {
        let r = Arc::clone(&registry);
        handles.push(tokio::spawn(async move {
            for _ in 0..50 {
                r.execute("gov_typed", json!({"count": 2}), &ToolContext::new())
                    .await;
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(registry.stats_for("gov_typed").unwrap().call_count, 400);
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_spills() {
    let dir = std::env::temp_dir().join(format!("tool-core-spill-{}", std::process::id()));
    let registry =
        registry().with_truncation(Some(Truncation::new().max_lines(100).spill_dir(&dir)));
    let res = registry
        .execute("gov_big", json!({"lines": 5000}), &ToolContext::new())
        .await;
    assert_eq!(res.metadata["truncated"], true);
    assert!(res.output.starts_with("line 0\n"));
    assert!(res.output.trim_end().ends_with("line 4999"));
    let path = res.metadata["output_path"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert_eq!(full.lines().count(), 5000);
    assert!(
        res.output.contains(path),
        "the marker says where the full text is"
    );
    let small = registry
        .execute("gov_big", json!({"lines": 3}), &ToolContext::new())
        .await;
    assert!(small.metadata.get("truncated").is_none());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn two_layer_memory_replays_the_seed_example() {
    let extraction = "x".repeat(10_000);
    let mut history = ToolHistory::new();
    history.push(
        1,
        "extract_1",
        ToolResult::ok(extraction.clone())
            .with_long_term_memory("Extracted the pricing page (10 000 chars).")
            .output_once(),
    );
    history.push(1, "plain_1", ToolResult::ok("kept every turn"));
    let turn1 = history.render(1);
    assert_eq!(turn1[0].1, extraction);
    for turn in 2..5 {
        let later = history.render(turn);
        assert_eq!(
            later[0],
            (
                "extract_1".to_owned(),
                "Extracted the pricing page (10 000 chars).".to_owned()
            )
        );
        assert_eq!(later[1].1, "kept every turn");
    }
}

#[tokio::test]
async fn batch_runs_reads_concurrently_and_keeps_order() {
    let r = ToolRegistry::global();
    let results = r
        .execute_batch(
            vec![
                ("gov_read_sleep", json!({"ms": 300})),
                ("gov_read_sleep", json!({"ms": 300})),
                ("gov_read_sleep", json!({"ms": 300})),
                ("gov_write_mark", json!({"mark": "w"})),
                ("gov_read_sleep", json!({"ms": 1})),
            ],
            &ToolContext::new(),
        )
        .await;
    let outputs: Vec<&str> = results.iter().map(|r| r.output.as_str()).collect();
    assert_eq!(
        outputs,
        ["slept 300", "slept 300", "slept 300", "w", "slept 1"]
    );
    // The three reads overlapped; the write ran alone.
    assert_eq!(MAX_IN_FLIGHT.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn secrets_never_leak_through_argument_errors_or_attachments() {
    let r = ToolRegistry::global();
    let store = SecretStore::new()
        .with_secret("quoted", "s3cr3t\"q\nline2")
        .unwrap()
        .with_secret("tok", "tok-ABCDEFGHIJKLMNOP")
        .unwrap();
    let ctx = ToolContext::new().with_secrets(store);
    // JSON-escaped in the argument error.
    let res = r
        .execute(
            "gov_reflect",
            json!({"text": "x", "n": "<secret>quoted</secret>"}),
            &ctx,
        )
        .await;
    let text = serde_json::to_string(&res).unwrap();
    assert!(res.is_error());
    assert!(!text.contains("s3cr3t"), "{text}");
    // Cut at the 200-character quote limit: no prefix of the value survives.
    let long = format!("{}<secret>tok</secret>", "a".repeat(190));
    let res = r
        .execute("gov_reflect", json!({"text": "x", "n": long}), &ctx)
        .await;
    let text = serde_json::to_string(&res).unwrap();
    assert!(!text.contains("tok-ABC"), "{text}");
    // Attachment names.
    let res = r
        .execute("gov_reflect", json!({"text": "<secret>tok</secret>"}), &ctx)
        .await;
    assert_eq!(res.attachments[0].name, "name-<secret>tok</secret>");
}

#[tokio::test]
async fn encoded_secrets_are_masked_in_output_title_errors_and_metadata() {
    let r = ToolRegistry::global();
    let p = "<secret>pw</secret>";
    let six = [p; 6].join(" ");
    for value in [
        "hunter2-password",
        "tok>?~\u{fc}=1",
        "p@ss w0rd&=?",
        "k3y/with+plus~~",
    ] {
        let forms = encodings(value);
        let ctx =
            ToolContext::new().with_secrets(SecretStore::new().with_secret("pw", value).unwrap());
        let res = r.execute("gov_encoded", json!({"secret": p}), &ctx).await;
        assert!(res.is_ok(), "{:?}", res.error);
        assert_eq!(res.output, format!("sent {six}"), "{value:?}");
        assert_eq!(
            res.title.as_deref(),
            Some(format!("sending {six}").as_str())
        );
        assert_eq!(
            res.long_term_memory.as_deref(),
            Some(format!("sent {six}").as_str())
        );
        assert_eq!(res.metadata["forms"]["list"], json!(vec![p; 6]));
        let keyed = res.metadata["forms"]["keyed"].as_object().unwrap();
        assert_eq!(keyed.keys().collect::<Vec<_>>(), [p]);
        assert_eq!(res.attachments[0].name, format!("{p}.txt"));
        let failed = r
            .execute("gov_encoded", json!({"secret": p, "fail": true}), &ctx)
            .await;
        assert_eq!(
            failed.error.as_ref().map(|e| e.message.as_str()),
            Some(format!("could not send {six}").as_str())
        );
        for (what, res) in [("result", &res), ("error", &failed)] {
            let text = serde_json::to_string(res).unwrap();
            for form in &forms {
                assert!(
                    !text.contains(form.as_str()),
                    "{form} leaked into the {what}: {text}"
                );
            }
        }
    }
}

#[tokio::test]
async fn secrets_shorter_than_four_characters_are_refused_at_load() {
    let e = SecretStore::from_json(&json!({"pin": "abc"})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "secret \"pin\" is 3 characters long, shorter than the minimum of 4 (MIN_SECRET_LEN): \
         masking so short a value would replace it inside every word that contains it; use a \
         longer value"
    );
    for bad in [
        json!({"k": "x"}),
        json!({"k": ""}),
        json!({"*.example.com": {"k": "abc"}}),
        json!({"ok": "long enough", "k": "日本語"}),
    ] {
        let e = SecretStore::from_json(&bad).unwrap_err();
        assert!(
            e.to_string()
                .contains("characters long, shorter than the minimum of 4"),
            "{e}"
        );
    }
}

#[tokio::test]
async fn waiting_for_approval_honours_cancellation() {
    let token = tool_core::CancellationToken::new();
    let ctx = ToolContext::new()
        .with_cancellation_token(token.clone())
        .with_approver(|_: ApprovalRequest| std::future::pending::<ApprovalDecision>());
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let res = ToolRegistry::global()
        .execute("gov_send", json!({"to": "a", "body": "b"}), &ctx)
        .await;
    let e = res.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Cancelled);
    assert!(
        e.message.contains("waiting for confirmation"),
        "{}",
        e.message
    );
    cancel.await.unwrap();
}

#[tokio::test]
async fn page_credentials_stay_out_of_messages() {
    let ctx = ToolContext::new().with_page_url("https://user:hunter2@gitlab.com/x");
    let e = ToolRegistry::global()
        .execute("gov_comment", json!({"body": "hi"}), &ctx)
        .await
        .error
        .unwrap();
    assert!(
        !e.message.contains("hunter2") && e.message.contains("https://gitlab.com/x"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn approvers_never_see_hidden_values_the_model_sent() {
    let seen: Arc<Mutex<Vec<Map<String, Value>>>> = Arc::default();
    let s = Arc::clone(&seen);
    let ctx =
        ToolContext::new()
            .with_value("owner", "ana")
            .with_approver(move |r: ApprovalRequest| {
                s.lock().unwrap().push(r.arguments);
                async { ApprovalDecision::Approve }
            });
    let res = ToolRegistry::global()
        .execute(
            "gov_owned_note",
            json!({"text": "hi", "owner": "mallory"}),
            &ctx,
        )
        .await;
    assert_eq!(res.output, "hi by ana");
    assert_eq!(res.metadata["ignored_hidden_params"], json!(["owner"]));
    assert_eq!(
        Value::Object(seen.lock().unwrap()[0].clone()),
        json!({"text": "hi"})
    );
}
