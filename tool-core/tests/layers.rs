//! Middleware layers (`tool_core::layer`) through `execute`: their order,
//! rewrites that go through validation and approval again, refusals,
//! bounded retries, per-registry and per-view layers, result views; and the
//! approval gate's timeout, default and kind gating (issue 30).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tool_core::layer::{
    BRIEF_BYTES, LayerCall, LayerFuture, MAX_RUNS_PER_LAYER, Next, ResultView, ResultViews, Retry,
    ToolLayer,
};
use tool_core::truncate::Truncation;
use tool_core::{
    ApprovalDecision, ApprovalDefault, ApprovalPolicy, ApprovalRequest, ErrorKind, RegistryView,
    SecretStore, Tool, ToolContext, ToolKind, ToolRegistry, ToolResult, ToolSpec, tool,
};

/// Repeat a word.
///
/// # Arguments
/// * `word` - The word.
/// * `times` - How often.
#[tool(kind = "read", read_only)]
fn ly_repeat(word: String, times: u32) -> String {
    vec![word; times as usize].join(" ")
}

/// Send a message.
///
/// # Arguments
/// * `to` - The recipient.
/// * `body` - The text.
#[tool(kind = "network", requires_confirmation)]
fn ly_send(to: String, body: String) -> String {
    format!("sent to {to}: {body}")
}

/// Save a note.
///
/// # Arguments
/// * `text` - The note.
#[tool(kind = "write")]
fn ly_save(text: String) -> String {
    format!("saved {text}")
}

/// Post to the shop.
///
/// # Arguments
/// * `body` - The text.
#[tool(kind = "network", url_patterns = ["https://shop.example/**"])]
fn ly_shop_post(body: String) -> String {
    format!("posted {body}")
}

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory().expect("the test tools register")
}

fn obj(v: &Value) -> Map<String, Value> {
    v.as_object().expect("an object").clone()
}

/// Logs `<name> in` before the rest of the stack and `<name> out` after,
/// and adds a note with its name to the result.
struct Logged {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl ToolLayer for Logged {
    fn name(&self) -> &str {
        self.name
    }
    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            self.log
                .lock()
                .expect("not poisoned")
                .push(format!("{} in", self.name));
            let mut r = next.run(call).await;
            self.log
                .lock()
                .expect("not poisoned")
                .push(format!("{} out", self.name));
            r.add_note(format!("seen by {}", self.name));
            r
        })
    }
}

/// Sets `key` to `value` in the arguments.
struct SetArg {
    key: &'static str,
    value: Value,
}

impl ToolLayer for SetArg {
    fn name(&self) -> &str {
        "set_arg"
    }
    fn call<'a>(&'a self, mut call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            let mut args = call.arguments().clone();
            args.insert(self.key.to_owned(), self.value.clone());
            call.rewrite(self.name(), args, &format!("`{}` is fixed here", self.key));
            next.run(call).await
        })
    }
}

#[tokio::test]
async fn layers_run_in_order_first_added_outermost() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let layer = |name| Logged {
        name,
        log: Arc::clone(&log),
    };
    let tools = registry()
        .with_layer(layer("a"))
        .with_layer(layer("b"))
        .with_layer(layer("c"));
    assert_eq!(tools.layer_names(), ["a", "b", "c"]);
    let r = tools
        .execute(
            "ly_repeat",
            json!({"word": "hi", "times": 2}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(r.output, "hi hi");
    assert_eq!(
        *log.lock().expect("not poisoned"),
        ["a in", "b in", "c in", "c out", "b out", "a out"]
    );
    // The innermost layer touched the result first.
    assert_eq!(r.notes, ["seen by c", "seen by b", "seen by a"]);
}

#[tokio::test]
async fn a_rewrite_is_told_to_the_model_and_validated_again() {
    let tools = registry().with_layer(SetArg {
        key: "times",
        value: json!(3),
    });
    let r = tools
        .execute(
            "ly_repeat",
            json!({"word": "ok", "times": 1}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(r.output, "ok ok ok");
    assert_eq!(r.metadata["rewritten_by"], json!(["set_arg"]));
    assert_eq!(
        r.notes,
        ["the middleware `set_arg` changed the arguments before the call: `times` is fixed here"]
    );

    // A rewrite to arguments the tool cannot take gets the validation error.
    let tools = registry().with_layer(SetArg {
        key: "times",
        value: json!("many"),
    });
    let r = tools
        .execute(
            "ly_repeat",
            json!({"word": "ok", "times": 1}),
            &ToolContext::new(),
        )
        .await;
    let error = r.error.expect("invalid arguments");
    assert_eq!(error.kind, ErrorKind::InvalidArguments);
    assert!(error.message.contains("`times`"), "{}", error.message);
    assert!(error.message.contains("many"), "{}", error.message);
    assert_eq!(r.metadata["rewritten_by"], json!(["set_arg"]));
}

#[tokio::test]
async fn a_rewrite_is_put_through_url_scope_and_secrets_again() {
    const TOKEN: &str = "tok-1234567890abcdef";
    let secrets = SecretStore::new()
        .with_scoped_secret("https://shop.example/**", "shop_token", TOKEN)
        .expect("a valid secret");
    let layer = |key| SetArg {
        key,
        value: json!("auth <secret>shop_token</secret>"),
    };
    let on = |page: &str| {
        ToolContext::new()
            .with_secrets(secrets.clone())
            .with_page_url(page)
    };
    // On the shop's page the placeholder the layer put in is filled, and the
    // value never reaches the result.
    let tools = registry().with_layer(layer("body"));
    let r = tools
        .execute(
            "ly_shop_post",
            json!({"body": "hi"}),
            &on("https://shop.example/cart"),
        )
        .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(r.output.starts_with("posted auth "), "{}", r.output);
    assert!(!r.output.contains(TOKEN), "{}", r.output);
    assert_eq!(r.metadata["rewritten_by"], json!(["set_arg"]));
    // Off the tool's pages the rewritten call is refused by the URL scope.
    let r = tools
        .execute(
            "ly_shop_post",
            json!({"body": "hi"}),
            &on("https://evil.example/"),
        )
        .await;
    let error = r.error.expect("out of scope");
    assert_eq!(error.kind, ErrorKind::Denied);
    assert_eq!(
        error.message,
        "The tool `ly_shop_post` is not available on this page (the page https://evil.example/); use one of the tools offered here."
    );
    assert_eq!(r.metadata["rewritten_by"], json!(["set_arg"]));
    // A tool of every page: the layer's placeholder is not filled off the
    // secret's pages, and the tool does not run.
    let tools = registry().with_layer(layer("text"));
    let r = tools
        .execute(
            "ly_save",
            json!({"text": "x"}),
            &on("https://evil.example/"),
        )
        .await;
    let error = r.error.clone().expect("the secret is not for this page");
    assert_eq!(error.kind, ErrorKind::InvalidArguments);
    assert!(error.message.contains("shop_token"), "{}", error.message);
    assert!(r.output.is_empty());
    assert!(!format!("{r:?}").contains(TOKEN));
}

#[tokio::test]
async fn a_rewrite_is_approved_again_and_an_unknown_parameter_refused() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let ctx = ToolContext::new().with_approver(move |req: ApprovalRequest| {
        record
            .lock()
            .expect("not poisoned")
            .push(req.arguments.clone());
        async { ApprovalDecision::Approve }
    });
    let tools = registry().with_layer(SetArg {
        key: "to",
        value: json!("audit@example.com"),
    });
    let r = tools
        .execute(
            "ly_send",
            json!({"to": "ana@example.com", "body": "hi"}),
            &ctx,
        )
        .await;
    assert_eq!(r.output, "sent to audit@example.com: hi");
    assert_eq!(
        *seen.lock().expect("not poisoned"),
        [obj(&json!({"to": "audit@example.com", "body": "hi"}))]
    );

    let tools = registry().with_layer(SetArg {
        key: "cc",
        value: json!("eve@example.com"),
    });
    let r = tools
        .execute(
            "ly_send",
            json!({"to": "ana@example.com", "body": "hi"}),
            &ctx,
        )
        .await;
    let error = r.error.expect("unknown parameter");
    assert_eq!(error.kind, ErrorKind::InvalidArguments);
    assert!(error.message.contains("`cc`"), "{}", error.message);
}

/// Refuses calls whose `word` is "secret".
struct NoSecretWord;

impl ToolLayer for NoSecretWord {
    fn name(&self) -> &str {
        "no_secret_word"
    }
    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            if call.arguments().get("word") == Some(&json!("secret")) {
                return call.refuse(self.name(), "that word is not repeated");
            }
            next.run(call).await
        })
    }
}

#[tokio::test]
async fn a_layer_refuses_with_its_reason() {
    let tools = registry().with_layer(NoSecretWord);
    let r = tools
        .execute(
            "ly_repeat",
            json!({"word": "secret", "times": 2}),
            &ToolContext::new(),
        )
        .await;
    let error = r.error.expect("refused");
    assert_eq!(error.kind, ErrorKind::Denied);
    assert_eq!(
        error.message,
        "The call to `ly_repeat` was refused by `no_secret_word`: that word is not repeated"
    );
    assert_eq!(r.metadata["refused_by"], json!("no_secret_word"));
    let stats = tools.stats_for("ly_repeat").expect("stats");
    assert_eq!(stats.call_count, 1);
    let ok = tools
        .execute(
            "ly_repeat",
            json!({"word": "fine", "times": 1}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(ok.output, "fine");
}

/// A registry with one read-only tool `flaky` that fails the first
/// `failures` calls (kind `failed`) and counts every call.
fn flaky(failures: u32, read_only: bool) -> (ToolRegistry, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&calls);
    let spec = ToolSpec::new(
        "flaky",
        "Fails a few times.",
        json!({"type": "object", "properties": {}}),
    );
    let spec = if read_only {
        spec.with_flags(tool_core::ToolFlags {
            read_only: true,
            ..tool_core::ToolFlags::NONE
        })
    } else {
        spec
    };
    let tool = Tool::new(spec, move |_: Map<String, Value>, _| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if n <= failures {
                ToolResult::error(ErrorKind::Failed, format!("attempt {n} failed"))
            } else {
                ToolResult::ok(format!("attempt {n} worked"))
            }
        }
    })
    .expect("a valid tool");
    let mut r = ToolRegistry::new();
    r.register(tool).expect("registered");
    (r, calls)
}

#[tokio::test]
async fn retries_are_bounded() {
    let ctx = ToolContext::new();
    let (tools, calls) = flaky(2, true);
    let r = tools
        .with_layer(Retry::new(5))
        .execute("flaky", json!({}), &ctx)
        .await;
    assert_eq!(r.output, "attempt 3 worked");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(r.notes, ["the middleware `retry` ran this call 3 times"]);

    let (tools, calls) = flaky(100, true);
    let r = tools
        .with_layer(Retry::new(3))
        .execute("flaky", json!({}), &ctx)
        .await;
    assert_eq!(r.error.expect("still failing").message, "attempt 3 failed");
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    // A larger wish is clamped to the per-layer limit.
    assert_eq!(Retry::new(1000).max_attempts(), MAX_RUNS_PER_LAYER);
    let (tools, calls) = flaky(100, true);
    let _ = tools
        .with_layer(Retry::new(1000))
        .execute("flaky", json!({}), &ctx)
        .await;
    assert_eq!(calls.load(Ordering::SeqCst), MAX_RUNS_PER_LAYER);

    // A tool neither read-only nor idempotent is not run twice.
    let (tools, calls) = flaky(1, false);
    let r = tools
        .with_layer(Retry::new(5))
        .execute("flaky", json!({}), &ctx)
        .await;
    assert_eq!(r.error.expect("failed").message, "attempt 1 failed");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// Runs the call again and again, ignoring every result.
struct Loops;

impl ToolLayer for Loops {
    fn name(&self) -> &str {
        "loops"
    }
    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            let mut last = ToolResult::ok("");
            for _ in 0..50 {
                last = next.run(call.clone()).await;
            }
            last
        })
    }
}

#[tokio::test]
async fn a_looping_layer_is_stopped_at_the_limit() {
    let (tools, calls) = flaky(0, true);
    let r = tools
        .with_layer(Loops)
        .execute("flaky", json!({}), &ToolContext::new())
        .await;
    assert_eq!(calls.load(Ordering::SeqCst), MAX_RUNS_PER_LAYER);
    let error = r.error.expect("stopped");
    assert_eq!(error.kind, ErrorKind::Failed);
    assert_eq!(
        error.message,
        "The call to `flaky` was not run again: a middleware layer ran it 8 times already (the limit)."
    );
}

#[tokio::test]
async fn view_layers_run_outside_the_registrys_and_only_in_that_view() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let tools = registry().with_layer(Logged {
        name: "registry",
        log: Arc::clone(&log),
    });
    let guarded = RegistryView::new(tools.clone()).layer(Logged {
        name: "view",
        log: Arc::clone(&log),
    });
    let plain = RegistryView::new(tools.clone());
    let args = json!({"word": "x", "times": 1});
    let ctx = ToolContext::new();

    let r = guarded.execute("ly_repeat", args.clone(), &ctx).await;
    assert_eq!(r.notes, ["seen by registry", "seen by view"]);
    assert_eq!(
        std::mem::take(&mut *log.lock().expect("not poisoned")),
        ["view in", "registry in", "registry out", "view out"]
    );
    // A narrower view built from the guarded one keeps its layers.
    let narrower = guarded.clone().read_only();
    let r = narrower.execute("ly_repeat", args.clone(), &ctx).await;
    assert_eq!(r.notes, ["seen by registry", "seen by view"]);
    log.lock().expect("not poisoned").clear();

    let r = plain.execute("ly_repeat", args.clone(), &ctx).await;
    assert_eq!(r.notes, ["seen by registry"]);
    let r = tools.execute("ly_repeat", args, &ctx).await;
    assert_eq!(r.notes, ["seen by registry"]);
    assert_eq!(
        *log.lock().expect("not poisoned"),
        ["registry in", "registry out", "registry in", "registry out"]
    );
}

/// An approver that never answers.
fn silent(ctx: ToolContext) -> ToolContext {
    ctx.with_approver(|_r: ApprovalRequest| std::future::pending::<ApprovalDecision>())
}

#[tokio::test]
async fn an_unanswered_approval_takes_the_callers_default() {
    assert_eq!(
        ToolContext::new().approval_timeout(),
        (Duration::from_secs(300), ApprovalDefault::Deny)
    );
    let args = json!({"to": "ana@example.com", "body": "hi"});
    let ctx = silent(ToolContext::new())
        .with_approval_timeout(Duration::from_millis(50), ApprovalDefault::Deny);
    let r = registry().execute("ly_send", args.clone(), &ctx).await;
    let error = r.error.expect("denied");
    assert_eq!(error.kind, ErrorKind::Denied);
    assert_eq!(
        error.message,
        "Nobody answered the approval of `ly_send` within 50ms, and an unanswered approval is denied here, so the call was not made."
    );
    assert_eq!(r.metadata["approval_timed_out"], json!(true));

    let ctx = silent(ToolContext::new())
        .with_approval_timeout(Duration::from_millis(50), ApprovalDefault::Approve);
    let r = registry().execute("ly_send", args, &ctx).await;
    assert_eq!(r.output, "sent to ana@example.com: hi");
    assert_eq!(r.metadata["approval_timed_out"], json!(true));
    assert_eq!(
        r.notes,
        [
            "nobody answered the approval within 50ms; the caller's default (approve) let the call run"
        ]
    );
}

#[tokio::test]
async fn side_effects_are_gated_by_kind() {
    let tools = registry();
    let save = json!({"text": "n1"});
    let read = json!({"word": "r", "times": 1});
    // Without gating, a write tool that does not require confirmation runs.
    let plain = ToolContext::new();
    assert_eq!(
        tools.execute("ly_save", save.clone(), &plain).await.output,
        "saved n1"
    );
    // Gated: every write goes to the approval gate, here a policy.
    let gated = ToolContext::new()
        .with_confirmed_kinds([ToolKind::Write, ToolKind::Exec, ToolKind::Network])
        .with_approver(ApprovalPolicy::new().deny(ToolKind::Write));
    let r = tools.execute("ly_save", save.clone(), &gated).await;
    assert_eq!(
        r.error.expect("denied").message,
        "The call to `ly_save` was not approved: calls of kind `write` are not allowed by policy"
    );
    assert_eq!(
        tools.execute("ly_repeat", read, &gated).await.output,
        "r",
        "reads are not gated"
    );
    // Gated with nobody to ask: denied.
    let nobody = ToolContext::new().with_confirmed_kinds([ToolKind::Write]);
    let r = tools.execute("ly_save", save, &nobody).await;
    assert_eq!(r.error.expect("denied").kind, ErrorKind::Denied);
}

/// A registry with `lines` (prints `n` numbered lines) and no output budget.
fn printer() -> ToolRegistry {
    let spec = ToolSpec::new(
        "lines",
        "Print lines.",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
    );
    let tool = Tool::new(spec, |a: Map<String, Value>, _| async move {
        let n = a.get("n").and_then(Value::as_u64).unwrap_or(0);
        ToolResult::ok((0..n).map(|i| format!("line {i}\n")).collect::<String>())
    })
    .expect("a valid tool");
    let mut r = ToolRegistry::new().with_truncation(None);
    r.register(tool).expect("registered");
    r
}

#[tokio::test]
async fn result_views_per_tool() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let spill = Truncation::new().spill_dir(dir.path().join("spill"));
    let ctx = ToolContext::new().with_trace_id("views-1");
    let full: String = (0..500).map(|i| format!("line {i}\n")).collect();

    let tools = printer().with_layer(ResultViews::new().spill(spill.clone()));
    let r = tools.execute("lines", json!({"n": 500}), &ctx).await;
    assert_eq!(r.output, full, "full by default");
    assert!(!r.metadata.contains_key("result_view"));

    let tools = printer().with_layer(
        ResultViews::new()
            .view("lines", ResultView::Brief)
            .spill(spill.clone()),
    );
    let r = tools.execute("lines", json!({"n": 500}), &ctx).await;
    assert!(r.output.len() < BRIEF_BYTES + 200, "{}", r.output.len());
    assert!(r.output.starts_with("line 0\n"));
    assert!(r.output.ends_with("line 499\n"));
    assert_eq!(r.metadata["result_view"], json!("brief"));
    let path = r.metadata["output_path"].as_str().expect("a spill file");
    assert_eq!(std::fs::read_to_string(path).expect("readable"), full);
    // Short output is left whole.
    let r = tools.execute("lines", json!({"n": 2}), &ctx).await;
    assert_eq!(r.output, "line 0\nline 1\n");

    let tools = printer().with_layer(
        ResultViews::new()
            .default_view(ResultView::Minimal)
            .spill(spill),
    );
    let r = tools.execute("lines", json!({"n": 500}), &ctx).await;
    let path = r.metadata["output_path"]
        .as_str()
        .expect("a spill file")
        .to_owned();
    assert_eq!(
        r.output,
        format!(
            "Done ({} bytes, 500 lines of output; saved to {path}).",
            full.len()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).expect("readable"), full);
    assert_eq!(r.metadata["result_view"], json!("minimal"));
}

/// Panics: in `call` itself (`sync`), or in its future after `await`ing once.
struct Panicky {
    sync: bool,
}

impl ToolLayer for Panicky {
    fn name(&self) -> &str {
        if self.sync {
            "panics_sync"
        } else {
            "panics_async"
        }
    }
    fn call<'a>(&'a self, _call: LayerCall, _next: Next<'a>) -> LayerFuture<'a> {
        assert!(!self.sync, "layer boom (sync)");
        Box::pin(async move {
            tokio::task::yield_now().await;
            panic!("layer boom");
        })
    }
}

#[tokio::test]
async fn a_panicking_layer_is_contained_and_named() {
    for (sync, name) in [(false, "panics_async"), (true, "panics_sync")] {
        // Inside another layer, so the panic crosses `Next::run` too.
        let log = Arc::new(Mutex::new(Vec::new()));
        let tools = registry()
            .with_layer(Logged {
                name: "outer",
                log: Arc::clone(&log),
            })
            .with_layer(Panicky { sync });
        let r = tools
            .execute(
                "ly_repeat",
                json!({"word": "hi", "times": 1}),
                &ToolContext::new(),
            )
            .await;
        let error = r.error.expect("a panic is an error result");
        assert_eq!(error.kind, ErrorKind::Panicked);
        assert_eq!(
            error.message,
            format!(
                "The middleware layer `{name}` crashed with an internal error while handling the call to `ly_repeat`, so the call has no result. Do not retry the same call; try another approach."
            )
        );
        assert_eq!(r.notes, ["seen by outer"], "the outer layer saw the result");
        assert_eq!(
            tools.stats_for("ly_repeat").expect("stats").call_count,
            1,
            "the call is recorded"
        );
    }
}

/// Waits before handing the call on (a slow layer: a remote policy check).
struct Slow(Duration);

impl ToolLayer for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(self.0).await;
            next.run(call).await
        })
    }
}

#[tokio::test]
async fn the_calls_timeout_bounds_its_layers() {
    let (tools, calls) = flaky(0, true);
    let tools = tools.with_layer(Slow(Duration::from_secs(5)));
    let ctx = ToolContext::new().with_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let r = tools.execute("flaky", json!({}), &ctx).await;
    let took = started.elapsed();
    let error = r.error.expect("stopped");
    assert_eq!(error.kind, ErrorKind::Timeout);
    assert_eq!(
        error.message,
        "The call to `flaky` did not finish within 300ms and was stopped. Try a smaller request."
    );
    assert!(took < Duration::from_secs(2), "stopped after {took:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the tool never ran");
    let stats = tools.stats_for("flaky").expect("stats");
    assert_eq!((stats.call_count, stats.timeouts), (1, 1));
}

#[tokio::test]
async fn the_governed_stages_do_not_count_against_the_layers_time() {
    // Each run of the tool takes 200 ms of a 300 ms timeout; the retry's
    // second run ends 400 ms after the start, still a success: the time the
    // stages take is bounded by their own limits, the layers' by the timeout.
    let calls = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&calls);
    let spec = ToolSpec::new("steady", "Takes 200 ms.", json!({"type": "object"})).with_flags(
        tool_core::ToolFlags {
            read_only: true,
            ..tool_core::ToolFlags::NONE
        },
    );
    let tool = Tool::new(spec, move |_: Map<String, Value>, _| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if n == 1 {
                ToolResult::error(ErrorKind::Failed, "first run failed")
            } else {
                ToolResult::ok(format!("run {n} worked"))
            }
        }
    })
    .expect("a valid tool");
    let mut tools = ToolRegistry::new().with_layer(Retry::new(3));
    tools.register(tool).expect("registered");
    let ctx = ToolContext::new().with_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let r = tools.execute("steady", json!({}), &ctx).await;
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert_eq!(r.output, "run 2 worked");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn cancellation_stops_a_call_held_by_a_layer() {
    let (tools, calls) = flaky(0, true);
    let tools = tools.with_layer(Slow(Duration::from_secs(5)));
    let ctx = ToolContext::new();
    let token = ctx.cancellation_token().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    });
    let started = std::time::Instant::now();
    let r = tools.execute("flaky", json!({}), &ctx).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    let error = r.error.expect("cancelled");
    assert_eq!(error.kind, ErrorKind::Cancelled);
    assert_eq!(
        error.message,
        "The call to `flaky` was cancelled before it finished."
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the tool never ran");
}

#[tokio::test]
async fn a_call_cancelled_before_the_governed_stages_is_not_run() {
    // Cancelled while the layer waits (a zero wait: the layer itself ends
    // before the pipeline notices), and with no layer at all.
    struct CancelsFirst;
    impl ToolLayer for CancelsFirst {
        fn name(&self) -> &str {
            "cancels_first"
        }
        fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
            Box::pin(async move {
                next.context().cancellation_token().cancel();
                next.run(call).await
            })
        }
    }
    let (tools, calls) = flaky(0, true);
    let tools = tools.with_layer(CancelsFirst);
    let r = tools.execute("flaky", json!({}), &ToolContext::new()).await;
    assert_eq!(r.error.expect("cancelled").kind, ErrorKind::Cancelled);
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the tool never ran");

    let (tools, calls) = flaky(0, true);
    let ctx = ToolContext::new();
    ctx.cancellation_token().cancel();
    let r = tools.execute("flaky", json!({}), &ctx).await;
    assert_eq!(
        r.error.expect("cancelled").message,
        "The call to `flaky` was cancelled before it finished."
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the tool never ran");
}

/// Adds a text of its own to the result (here a value it knows from elsewhere).
struct Appends(&'static str);

impl ToolLayer for Appends {
    fn name(&self) -> &str {
        "appends"
    }
    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            let mut r = next.run(call).await;
            r.output.push_str(self.0);
            r.add_note(format!("seen{}", self.0));
            r
        })
    }
}

#[tokio::test]
async fn what_a_layer_adds_to_the_result_is_masked() {
    let store = SecretStore::new()
        .with_secret("api_key", "S3cretValue99")
        .expect("a valid secret");
    let ctx = ToolContext::new().with_secrets(store);
    let tools = registry().with_layer(Appends(" leak:S3cretValue99"));
    let r = tools
        .execute("ly_repeat", json!({"word": "hi", "times": 1}), &ctx)
        .await;
    assert_eq!(r.output, "hi leak:<secret>api_key</secret>");
    assert_eq!(r.notes, ["seen leak:<secret>api_key</secret>"]);
}

#[tokio::test]
async fn a_run_time_tools_arguments_are_checked_against_its_schema() {
    // Review 30 F6: a `Tool::new` tool with a `Map` handler, the model's own
    // arguments and a layer's rewrite alike.
    let calls = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&calls);
    let spec = ToolSpec::new(
        "echo_limit",
        "Echo with a limit.",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "limit": {"type": "integer", "maximum": 100}},
            "required": ["text"],
            "additionalProperties": false
        }),
    );
    let tool = Tool::new(spec, move |a: Map<String, Value>, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move { ToolResult::ok(format!("{}", Value::Object(a))) }
    })
    .expect("a valid tool");
    let mut tools = ToolRegistry::new();
    tools.register(tool).expect("registered");
    let ctx = ToolContext::new();
    for (args, message) in [
        (
            json!({"text": "a", "limit": "abc"}),
            "Invalid value for parameter `limit` of `echo_limit`: expected an integer, but received a string \"abc\".",
        ),
        (
            json!({"text": "a", "limit": 5000}),
            "Invalid value for parameter `limit` of `echo_limit`: expected an integer of at most 100, but received an integer 5000.",
        ),
        (
            json!({"text": "a", "bogus": 1}),
            "Unknown parameter `bogus` is not accepted by `echo_limit`. Valid parameters: `limit`, `text`.",
        ),
        (
            json!({}),
            "Missing required parameter `text` of `echo_limit`: expected a string.",
        ),
    ] {
        let r = tools.execute("echo_limit", args.clone(), &ctx).await;
        let error = r.error.expect("refused");
        assert_eq!(error.kind, ErrorKind::InvalidArguments, "{args}");
        assert_eq!(error.message, message, "{args}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the handler never ran");
    let r = tools
        .execute("echo_limit", json!({"text": "a", "limit": 7}), &ctx)
        .await;
    assert_eq!(r.output, r#"{"text":"a","limit":7}"#);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
