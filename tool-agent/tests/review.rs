//! The reviewer model (an approver and a parallel safety check), the
//! refusal circuit breaker and the summariser, against scripted models
//! (issue 30): yes, no with a reason, garbage, no answer at all.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tool_agent::review::{Reviewer, SafetyCheck};
use tool_agent::summarize::Summarizer;
use tool_agent::{
    Agent, Message, ModelClient, ModelError, ModelErrorKind, ModelRequest, ScriptedClient,
    ScriptedTurn, SendFuture,
};
use tool_core::format::ToolCall;
use tool_core::governance::breaker::RefusalBreaker;
use tool_core::truncate::Truncation;
use tool_core::{
    ApprovalDecision, ApprovalDefault, ApprovalRequest, ErrorKind, Format, Tool, ToolContext,
    ToolFlags, ToolKind, ToolRegistry, ToolResult, ToolSpec,
};

/// A registry with `save_note` (kind write, counts its runs) and
/// `read_notes` (read-only, prints `n` lines).
fn tools(saves: &Arc<AtomicU32>) -> ToolRegistry {
    let counter = Arc::clone(saves);
    let save = Tool::new(
        ToolSpec::new(
            "save_note",
            "Save a note to the shared notebook.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        )
        .with_kind(ToolKind::Write),
        move |a: Map<String, Value>, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { ToolResult::ok(format!("saved {}", a["text"])) }
        },
    )
    .expect("a valid tool");
    let read = Tool::new(
        ToolSpec::new(
            "read_notes",
            "Read the notebook.",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        )
        .with_kind(ToolKind::Read)
        .with_flags(ToolFlags {
            read_only: true,
            ..ToolFlags::NONE
        }),
        |a: Map<String, Value>, _| async move {
            let n = a.get("n").and_then(Value::as_u64).unwrap_or(1);
            ToolResult::ok((0..n).map(|i| format!("note {i}\n")).collect::<String>())
        },
    )
    .expect("a valid tool");
    let mut r = ToolRegistry::new();
    r.register(save).expect("registered");
    r.register(read).expect("registered");
    r
}

/// A context that sends every write to `approver`.
fn gated(approver: impl tool_core::Approver) -> ToolContext {
    ToolContext::new()
        .with_trace_id("review-1")
        .with_confirmed_kinds([ToolKind::Write])
        .with_approver(approver)
}

/// The text of the last user message a scripted client saw.
fn last_user_text(client: &ScriptedClient) -> String {
    match client.seen().last().and_then(|s| s.last.clone()) {
        Some(Message::User { content }) => content,
        other => panic!("no user message: {other:?}"),
    }
}

#[tokio::test]
async fn the_reviewer_allows_and_sees_call_description_and_masked_context() {
    let saves = Arc::new(AtomicU32::new(0));
    let registry = tools(&saves);
    let model = Arc::new(ScriptedClient::new([ScriptedTurn::text("ALLOW")]));
    let reviewer = Reviewer::new_shared(model.clone()).describe_tools(&registry);
    reviewer.context().push(
        "user",
        "Save my note. My key is GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    );
    reviewer.context().push("assistant", "I will save it.");
    let r = registry
        .execute("save_note", json!({"text": "buy milk"}), &gated(reviewer))
        .await;
    assert_eq!(r.output, "saved \"buy milk\"");
    assert_eq!(saves.load(Ordering::SeqCst), 1);
    let seen = model.seen();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0]
            .system
            .as_deref()
            .is_some_and(|s| s.contains("`DENY: <short reason>`"))
    );
    assert_eq!(seen[0].tools, 0);
    let prompt = last_user_text(&model);
    assert!(
        prompt.starts_with("Tool: save_note (kind: write)\n"),
        "{prompt}"
    );
    assert!(prompt.contains("Description: Save a note to the shared notebook.\n"));
    assert!(prompt.contains("Arguments: {\"text\":\"buy milk\"}\n"));
    assert!(
        prompt.contains(
            "user: Save my note. My key is GITHUB_TOKEN=<masked>\nassistant: I will save it."
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("ghp_"), "{prompt}");
}

#[tokio::test]
async fn a_refusal_and_its_reason_reach_the_model_as_the_result() {
    let saves = Arc::new(AtomicU32::new(0));
    let model = ScriptedClient::new([ScriptedTurn::text(
        "DENY: the user asked to read, not to write",
    )]);
    let r = tools(&saves)
        .execute(
            "save_note",
            json!({"text": "x"}),
            &gated(Reviewer::new(model)),
        )
        .await;
    let error = r.error.expect("refused");
    assert_eq!(error.kind, ErrorKind::Denied);
    assert_eq!(
        error.message,
        "The call to `save_note` was not approved: the reviewer refused: the user asked to read, not to write"
    );
    assert_eq!(saves.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_garbage_answer_takes_the_default_verdict() {
    let saves = Arc::new(AtomicU32::new(0));
    let model = ScriptedClient::new([ScriptedTurn::text("Hmm, hard to say. Maybe?")]);
    let r = tools(&saves)
        .execute(
            "save_note",
            json!({"text": "x"}),
            &gated(Reviewer::new(model)),
        )
        .await;
    assert_eq!(
        r.error.expect("refused").message,
        "The call to `save_note` was not approved: the reviewer refused: the reviewer's answer could not be read"
    );
    // A caller who chose "approve" as the default gets the call run.
    let model = ScriptedClient::new([ScriptedTurn::text("¯\\_(ツ)_/¯")]);
    let reviewer = Reviewer::new(model).timeout(Duration::from_secs(30), ApprovalDefault::Approve);
    let r = tools(&saves)
        .execute("save_note", json!({"text": "y"}), &gated(reviewer))
        .await;
    assert_eq!(r.output, "saved \"y\"");
    // A failing request is no answer either.
    let model = ScriptedClient::new([ScriptedTurn::Fail(ModelError::new(
        ModelErrorKind::Connect("refused".into()),
    ))]);
    let r = tools(&saves)
        .execute(
            "save_note",
            json!({"text": "z"}),
            &gated(Reviewer::new(model)),
        )
        .await;
    assert!(
        r.error
            .expect("refused")
            .message
            .ends_with("the reviewer could not be asked")
    );
    assert_eq!(saves.load(Ordering::SeqCst), 1);
}

/// A model that never answers.
struct Silent;

impl ModelClient for Silent {
    fn format(&self) -> Format {
        Format::Json
    }
    fn model(&self) -> &str {
        "silent"
    }
    fn send<'a>(&'a self, _request: ModelRequest<'a>) -> SendFuture<'a> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_reviewer_that_never_answers_ends_with_the_default() {
    let saves = Arc::new(AtomicU32::new(0));
    let reviewer = Reviewer::new(Silent).timeout(Duration::from_millis(50), ApprovalDefault::Deny);
    let r = tools(&saves)
        .execute("save_note", json!({"text": "x"}), &gated(reviewer))
        .await;
    assert_eq!(
        r.error.expect("refused").message,
        "The call to `save_note` was not approved: the reviewer refused: the reviewer did not answer within 50ms"
    );
    assert_eq!(saves.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn after_n_refusals_in_a_trace_the_person_decides() {
    let saves = Arc::new(AtomicU32::new(0));
    let registry = tools(&saves);
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("DENY: one"),
        ScriptedTurn::text("DENY: two"),
        ScriptedTurn::text("DENY: other trace"),
    ]));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    let breaker = RefusalBreaker::new(Reviewer::new_shared(model.clone()), 2).escalate_to(
        move |r: ApprovalRequest| {
            record
                .lock()
                .expect("not poisoned")
                .push(r.arguments["text"].clone());
            async { ApprovalDecision::Approve }
        },
    );
    let breaker = Arc::new(breaker);
    let ctx = ToolContext::new()
        .with_trace_id("loop-1")
        .with_confirmed_kinds([ToolKind::Write])
        .with_shared_approver(breaker.clone());
    let mut messages = Vec::new();
    for text in ["a", "b", "c", "d"] {
        let r = registry
            .execute("save_note", json!({"text": text}), &ctx)
            .await;
        messages.push(r.error.map_or(r.output, |e| e.message));
    }
    assert_eq!(
        messages,
        [
            "The call to `save_note` was not approved: the reviewer refused: one",
            "The call to `save_note` was not approved: the reviewer refused: two",
            "saved \"c\"",
            "saved \"d\"",
        ]
    );
    assert_eq!(
        *asked.lock().expect("not poisoned"),
        [json!("c"), json!("d")]
    );
    assert_eq!(model.seen().len(), 2, "the reviewer was not asked again");
    assert_eq!(breaker.refusals(Some("loop-1")), 2);
    // Another trace starts with the reviewer.
    let other = ctx.clone().with_trace_id("loop-2");
    let r = registry
        .execute("save_note", json!({"text": "e"}), &other)
        .await;
    assert!(r.error.expect("refused").message.ends_with("other trace"));
    assert_eq!(breaker.refusals(Some("loop-2")), 1);
}

#[tokio::test]
async fn in_the_agent_loop_the_model_reads_the_refusal() {
    let saves = Arc::new(AtomicU32::new(0));
    let reviewer = Reviewer::new(ScriptedClient::new([ScriptedTurn::text(
        "DENY: the task was to read the notes",
    )]));
    let feed = reviewer.context().clone();
    let main = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([ToolCall::new("c1", "save_note", r#"{"text": "hi"}"#)]),
        ScriptedTurn::text("I may not save notes here."),
    ]));
    feed.push("user", "Read my notes.");
    let out = Agent::new(main.clone(), tools(&saves))
        .context(gated(reviewer))
        .run("Read my notes.")
        .await
        .expect("the run ends");
    assert_eq!(out.text, "I may not save notes here.");
    assert_eq!(saves.load(Ordering::SeqCst), 0);
    let seen = main.seen();
    let Some(Message::Tool { results, .. }) = seen[1].last.clone() else {
        panic!(
            "the second request ends with the tool results: {:?}",
            seen[1].last
        );
    };
    assert_eq!(
        results[0].result.error.as_ref().expect("refused").message,
        "The call to `save_note` was not approved: the reviewer refused: the task was to read the notes"
    );
}

#[tokio::test]
async fn the_agent_feeds_the_reviewer_a_bounded_masked_slice_of_its_run() {
    let saves = Arc::new(AtomicU32::new(0));
    let review_model = Arc::new(ScriptedClient::new([ScriptedTurn::text("ALLOW")]));
    let reviewer = Reviewer::new_shared(review_model.clone()).context_chars(400);
    let main = ScriptedClient::new([
        ScriptedTurn::calls([ToolCall::new("c1", "save_note", r#"{"text": "milk"}"#)]),
        ScriptedTurn::text("Saved."),
    ]);
    // A long earlier conversation, then the task with a secret in it.
    let mut conversation: Vec<Message> = (0..40)
        .flat_map(|i| {
            [
                Message::user(format!("old question {i} {}", "x".repeat(50))),
                Message::assistant(format!("old answer {i}")),
            ]
        })
        .collect();
    conversation.push(Message::user(
        "Save a note: buy milk. My key is GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ));
    let out = Agent::new(main, tools(&saves))
        .context(gated(reviewer.clone()))
        .reviewer(&reviewer)
        .run_conversation(conversation)
        .await
        .expect("the run ends");
    assert_eq!(out.text, "Saved.");
    assert_eq!(saves.load(Ordering::SeqCst), 1);
    assert_eq!(review_model.seen().len(), 1);
    let prompt = last_user_text(&review_model);
    let recent = prompt
        .split_once("<<<\n")
        .and_then(|(_, r)| r.split_once("\n>>>"))
        .map(|(r, _)| r)
        .unwrap_or_else(|| panic!("no recent conversation in {prompt}"));
    assert!(
        recent.ends_with(
            "\nuser: Save a note: buy milk. My key is GITHUB_TOKEN=<masked>\n\
             assistant: calls save_note {\"text\": \"milk\"}"
        ),
        "{recent}"
    );
    assert!(!prompt.contains("ghp_"), "{prompt}");
    // Bounded: at most 400 characters (and the newline between entries).
    assert!(recent.chars().count() <= 400 + 10, "{}", recent.len());
    assert!(recent.contains("assistant: old answer 39\n"), "{recent}");
    assert!(!recent.contains("old question 30 "), "{recent}");
    // The run's conversation is forgotten when it ends.
    assert_eq!(reviewer.context().slice_for(Some("review-1"), 4000), "");
}

/// A scripted model that answers only after `gate` is notified.
struct Gated {
    inner: ScriptedClient,
    gate: Arc<Notify>,
}

impl ModelClient for Gated {
    fn format(&self) -> Format {
        Format::Json
    }
    fn model(&self) -> &str {
        "gated"
    }
    fn send<'a>(&'a self, request: ModelRequest<'a>) -> SendFuture<'a> {
        Box::pin(async move {
            self.gate.notified().await;
            self.inner.send(request).await
        })
    }
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A registry with `slow_read` (read-only): notifies `started`, then waits
/// for ever holding a [`DropFlag`].
fn slow_read(started: Arc<Notify>, dropped: Arc<AtomicBool>) -> ToolRegistry {
    let tool = Tool::new(
        ToolSpec::new(
            "slow_read",
            "Read slowly.",
            json!({"type": "object", "properties": {}}),
        )
        .with_flags(ToolFlags {
            read_only: true,
            ..ToolFlags::NONE
        }),
        move |_: Map<String, Value>, _| {
            let (started, guard) = (Arc::clone(&started), DropFlag(Arc::clone(&dropped)));
            async move {
                let _guard = guard;
                started.notify_one();
                std::future::pending::<()>().await;
                ToolResult::ok("never")
            }
        },
    )
    .expect("a valid tool");
    let mut r = ToolRegistry::new();
    r.register(tool).expect("registered");
    r
}

#[tokio::test]
async fn the_safety_check_cancels_a_running_read_when_the_reviewer_says_no() {
    let started = Arc::new(Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let reviewer = Reviewer::new(Gated {
        inner: ScriptedClient::new([ScriptedTurn::text("DENY: reads the private key folder")]),
        gate: Arc::clone(&started),
    });
    let tools = slow_read(started, Arc::clone(&dropped)).with_layer(SafetyCheck::new(reviewer));
    let r = tools
        .execute("slow_read", json!({}), &ToolContext::new())
        .await;
    let error = r.error.expect("refused");
    assert_eq!(error.kind, ErrorKind::Denied);
    assert_eq!(
        error.message,
        "The call to `slow_read` was refused by `safety_check`: the reviewer refused: reads the private key folder"
    );
    assert_eq!(r.metadata["refused_by"], json!("safety_check"));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the running call was cancelled"
    );
}

#[tokio::test]
async fn the_safety_check_passes_allowed_reads_and_drops_refused_results() {
    let saves = Arc::new(AtomicU32::new(0));
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("ALLOW"),
        ScriptedTurn::text("DENY: too much at once"),
    ]));
    let tools = tools(&saves).with_layer(SafetyCheck::new(Reviewer::new_shared(model.clone())));
    let ctx = ToolContext::new();
    let r = tools.execute("read_notes", json!({"n": 2}), &ctx).await;
    assert_eq!(r.output, "note 0\nnote 1\n");
    let r = tools.execute("read_notes", json!({"n": 3}), &ctx).await;
    assert!(r.output.is_empty());
    assert!(
        r.error
            .expect("refused")
            .message
            .ends_with("the reviewer refused: too much at once")
    );
    // Writes are not the safety check's: no review, the call runs.
    let r = tools.execute("save_note", json!({"text": "w"}), &ctx).await;
    assert_eq!(r.output, "saved \"w\"");
    assert_eq!(model.seen().len(), 2);
}

#[tokio::test]
async fn safety_check_refusals_count_toward_the_breaker() {
    let saves = Arc::new(AtomicU32::new(0));
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("DENY: one"),
        ScriptedTurn::text("DENY: two"),
    ]));
    let reviewer = Reviewer::new_shared(model.clone());
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    let breaker =
        RefusalBreaker::new(reviewer.clone(), 2).escalate_to(move |r: ApprovalRequest| {
            record.lock().expect("not poisoned").push(r.tool);
            async { ApprovalDecision::Approve }
        });
    let registry = tools(&saves).with_layer(SafetyCheck::new(reviewer).with_breaker(&breaker));
    let ctx = gated(breaker.clone());
    for reason in ["one", "two"] {
        let r = registry.execute("read_notes", json!({"n": 1}), &ctx).await;
        assert_eq!(
            r.error.expect("refused").message,
            format!(
                "The call to `read_notes` was refused by `safety_check`: the reviewer refused: {reason}"
            )
        );
    }
    assert_eq!(breaker.refusals(Some("review-1")), 2);
    assert!(breaker.is_open(Some("review-1")));
    // The next gated call goes to the person, not the reviewer …
    let r = registry
        .execute("save_note", json!({"text": "x"}), &ctx)
        .await;
    assert_eq!(r.output, "saved \"x\"");
    // … and so does the next read, before it runs.
    let r = registry.execute("read_notes", json!({"n": 1}), &ctx).await;
    assert_eq!(r.output, "note 0\n");
    assert_eq!(
        *asked.lock().expect("not poisoned"),
        ["save_note", "read_notes"]
    );
    assert_eq!(model.seen().len(), 2, "the reviewer was not asked again");
}

#[tokio::test]
async fn large_results_are_summarised_with_the_full_text_saved() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let spill = Truncation::new().spill_dir(dir.path().join("spill"));
    let saves = Arc::new(AtomicU32::new(0));
    let model = Arc::new(ScriptedClient::new([ScriptedTurn::text(
        "  400 notes, numbered 0 to 399.  ",
    )]));
    let tools = tools(&saves).with_layer(
        Summarizer::new_shared(model.clone())
            .threshold(1024)
            .spill(spill.clone()),
    );
    let ctx = ToolContext::new().with_trace_id("sum-1");
    let full: String = (0..400).map(|i| format!("note {i}\n")).collect();

    // Small: untouched, no model asked.
    let r = tools.execute("read_notes", json!({"n": 3}), &ctx).await;
    assert_eq!(r.output, "note 0\nnote 1\nnote 2\n");
    assert!(model.seen().is_empty());

    let r = tools.execute("read_notes", json!({"n": 400}), &ctx).await;
    let path = r.metadata["output_path"]
        .as_str()
        .expect("a spill file")
        .to_owned();
    assert_eq!(
        r.output,
        format!(
            "400 notes, numbered 0 to 399.\n\n[A model's summary of {} bytes (400 lines) of output; the full text is in {path}: read it for details.]",
            full.len()
        )
    );
    assert_eq!(r.metadata["summarized"], json!(true));
    assert_eq!(std::fs::read_to_string(&path).expect("readable"), full);
    let prompt = last_user_text(&model);
    assert!(prompt.starts_with("The output of the tool `read_notes`:\n<<<\nnote 0\n"));
    assert!(prompt.contains("note 399\n>>>"));

    // The model fails: the output stays, the note says why.
    let model = ScriptedClient::new([ScriptedTurn::Fail(ModelError::new(ModelErrorKind::Http {
        status: 503,
        body: "busy".into(),
    }))]);
    let tools = tools_with(Summarizer::new(model).threshold(1024).spill(spill));
    let r = tools.execute("read_notes", json!({"n": 400}), &ctx).await;
    assert_eq!(r.output, full);
    assert!(!r.metadata.contains_key("summarized"));
    assert!(
        r.notes[0].starts_with("the summarising model failed ("),
        "{:?}",
        r.notes
    );
}

fn tools_with(layer: Summarizer) -> ToolRegistry {
    tools(&Arc::new(AtomicU32::new(0))).with_layer(layer)
}

#[tokio::test]
async fn an_open_breaker_asks_the_person_through_the_approval_gate() {
    let saves = Arc::new(AtomicU32::new(0));
    // A person who never answers: the context's approval timeout ends the wait.
    let breaker = RefusalBreaker::new(Reviewer::new(Silent), 1)
        .escalate_to(|_r: ApprovalRequest| std::future::pending::<ApprovalDecision>());
    breaker.record_refusal(Some("review-1"));
    let registry =
        tools(&saves).with_layer(SafetyCheck::new(Reviewer::new(Silent)).with_breaker(&breaker));
    let ctx = gated(breaker.clone())
        .with_approval_timeout(Duration::from_millis(50), ApprovalDefault::Deny);
    let started = std::time::Instant::now();
    let r = registry.execute("read_notes", json!({"n": 1}), &ctx).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let error = r.error.expect("denied");
    assert_eq!(error.kind, ErrorKind::Denied);
    assert_eq!(
        error.message,
        "Nobody answered the approval of `read_notes` within 50ms, and an unanswered approval is denied here, so the call was not made."
    );
    // Cancelled while waiting: `cancelled`, not a hang.
    let cancelled = gated(breaker.clone());
    cancelled.cancellation_token().cancel();
    let r = registry
        .execute("read_notes", json!({"n": 1}), &cancelled)
        .await;
    assert_eq!(r.error.expect("cancelled").kind, ErrorKind::Cancelled);
    // A panicking person is a failed approval, not a crash.
    let breaker = RefusalBreaker::new(Reviewer::new(Silent), 1)
        .escalate_to(|_r: ApprovalRequest| async move { panic!("person approver panicked") });
    breaker.record_refusal(Some("review-1"));
    let registry =
        tools(&saves).with_layer(SafetyCheck::new(Reviewer::new(Silent)).with_breaker(&breaker));
    let r = registry
        .execute("read_notes", json!({"n": 1}), &gated(breaker.clone()))
        .await;
    assert_eq!(
        r.error.expect("failed approval").message,
        "The approval of `read_notes` failed, so the call was not made."
    );
}

#[tokio::test]
async fn approvals_the_gate_stopped_waiting_for_count_toward_the_breaker() {
    let saves = Arc::new(AtomicU32::new(0));
    // The reviewer would wait 30 s; the context gives it 50 ms.
    let reviewer = Reviewer::new(Silent).timeout(Duration::from_secs(30), ApprovalDefault::Deny);
    let asked = Arc::new(AtomicU32::new(0));
    let count = Arc::clone(&asked);
    let breaker = RefusalBreaker::new(reviewer, 2).escalate_to(move |_r: ApprovalRequest| {
        count.fetch_add(1, Ordering::SeqCst);
        async { ApprovalDecision::Approve }
    });
    let ctx = gated(breaker.clone())
        .with_approval_timeout(Duration::from_millis(50), ApprovalDefault::Deny);
    let registry = tools(&saves);
    for _ in 0..2 {
        let r = registry
            .execute("save_note", json!({"text": "x"}), &ctx)
            .await;
        assert!(
            r.error
                .expect("timed out")
                .message
                .starts_with("Nobody answered the approval of `save_note` within 50ms")
        );
    }
    assert_eq!(breaker.refusals(Some("review-1")), 2);
    let r = registry
        .execute("save_note", json!({"text": "y"}), &ctx)
        .await;
    assert_eq!(r.output, "saved \"y\"", "the person approved");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // Reset: the trace goes to the reviewer again.
    breaker.reset(Some("review-1"));
    assert_eq!(breaker.refusals(Some("review-1")), 0);
    assert!(!breaker.is_open(Some("review-1")));
}

#[tokio::test]
async fn only_an_explicit_first_line_verdict_decides() {
    use tool_agent::review::{Verdict, parse_verdict};
    let deny = |r: &str| Some(Verdict::Deny(r.to_owned()));
    let cases = [
        ("allow", Some(Verdict::Allow)),
        ("Verdict: ALLOW", Some(Verdict::Allow)),
        ("\n\n```\nALLOW\n```", Some(Verdict::Allow)),
        ("> **DENY**: wipes the disk", deny("wipes the disk")),
        ("deny", deny("no reason given")),
        (
            "Yes, this call is dangerous and must not run.\nDENY: dangerous",
            None,
        ),
        ("Not a problem.\nALLOW", None),
        ("YES", None),
        ("APPROVED", None),
        ("NO", None),
        ("ALLOWING it would be wrong", None),
    ];
    for (answer, want) in cases {
        assert_eq!(parse_verdict(answer), want, "{answer:?}");
    }
    // Through the reviewer: a chatty first line fails closed.
    let saves = Arc::new(AtomicU32::new(0));
    let model = ScriptedClient::new([ScriptedTurn::text(
        "Yes, this call is dangerous and must not run.\nDENY: dangerous",
    )]);
    let r = tools(&saves)
        .execute(
            "save_note",
            json!({"text": "x"}),
            &gated(Reviewer::new(model)),
        )
        .await;
    assert_eq!(
        r.error.expect("refused").message,
        "The call to `save_note` was not approved: the reviewer refused: the reviewer's answer could not be read"
    );
    assert_eq!(saves.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_reviewer_is_sent_no_stored_secret_nor_supplied_value() {
    let store = tool_core::SecretStore::new()
        .with_secret("api_token", "S3cretValue99")
        .expect("a valid secret");
    let reviewer = Reviewer::new(ScriptedClient::new([ScriptedTurn::text("ALLOW")]))
        .with_secrets(store.clone());
    let feed = reviewer.context();
    feed.push(
        "user",
        "Log in with password hunter2hunter2 and my token S3cretValue99",
    );
    feed.push("user", "ok");
    feed.push("user", "then save it");
    let request = ApprovalRequest {
        tool: "save_note".into(),
        kind: ToolKind::Write,
        display: Default::default(),
        arguments: json!({
            "text": "<secret>api_token</secret> and sk-proj-abcdefghijklmnopqrstuvwxyz123456",
            "copy": "S3cretValue99",
        })
        .as_object()
        .expect("an object")
        .clone(),
        editable_params: Vec::new(),
        editable_schemas: Default::default(),
        defaults: Default::default(),
        trace_id: None,
        injected: json!({"session": "sess-PLAINVALUE-1234", "user_id": 42})
            .as_object()
            .expect("an object")
            .clone(),
    };
    let prompt = reviewer.prompt(&request);
    for leaked in ["S3cretValue99", "sk-proj-", "sess-PLAINVALUE", "42"] {
        assert!(!prompt.contains(leaked), "{leaked} in {prompt}");
    }
    assert!(
        prompt.contains(
            "Arguments: {\"text\":\"<secret>api_token</secret> and <masked>\",\"copy\":\"<secret>api_token</secret>\"}\n"
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains("Also supplied by the application (values not shown): session, user_id\n"),
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "user: Log in with password hunter2hunter2 and my token <secret>api_token</secret>\nok\nthen save it"
        ),
        "{prompt}"
    );

    // A safety check whose reviewer has no store uses the call's context's.
    let saves = Arc::new(AtomicU32::new(0));
    let model = Arc::new(ScriptedClient::new([ScriptedTurn::text("ALLOW")]));
    let reviewer = Reviewer::new_shared(model.clone());
    reviewer.context().push("user", "my token is S3cretValue99");
    let tools = tools(&saves).with_layer(SafetyCheck::new(reviewer));
    let ctx = ToolContext::new().with_secrets(store);
    let r = tools.execute("read_notes", json!({"n": 1}), &ctx).await;
    assert_eq!(r.output, "note 0\n");
    let prompt = last_user_text(&model);
    assert!(
        prompt.contains("user: my token is <secret>api_token</secret>"),
        "{prompt}"
    );
}
