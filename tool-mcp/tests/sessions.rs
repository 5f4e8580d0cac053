//! What an HTTP session holds on the server is freed when it ends (issue 17,
//! found by `benches/load`: the server's RSS grew by about 16 KiB with every
//! session a client opened and closed, because the session's `list_changed`
//! task waited only for a registry change and kept the session's peer).

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_core::{Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
use tool_mcp::{LiveRegistry, McpServer, McpToolSource, ProtocolEra};

/// A registry with `echo(text)` and `slow` (sleeps 5 s).
fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let object = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let echo = Tool::new(
        ToolSpec::new("echo", "Echo a text.", object.clone()),
        |args: Map<String, Value>, _ctx: ToolContext| async move {
            ToolResult::ok(args["text"].as_str().unwrap_or_default().to_owned())
        },
    )
    .expect("test setup");
    let slow = Tool::new(
        ToolSpec::new("slow", "Sleep 5 s.", object),
        |_args: Map<String, Value>, _ctx: ToolContext| async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            ToolResult::ok("slept")
        },
    )
    .expect("test setup");
    registry.register(echo).expect("test setup");
    registry.register(slow).expect("test setup");
    registry
}

/// Waits up to 10 s for `live` to have `want` subscribers; returns the last count.
async fn settle(live: &LiveRegistry, want: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    while live.subscribers() != want && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    live.subscribers()
}

async fn server() -> (LiveRegistry, String, tokio_util::sync::CancellationToken) {
    let live = LiveRegistry::new(registry());
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live.clone())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .expect("test setup");
    (live, format!("http://{addr}/mcp"), stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_sessions_leave_nothing_subscribed() {
    let (live, url, stop) = server().await;
    let baseline = live.subscribers();
    for sessions in [1, 5, 20] {
        let mut conns = Vec::new();
        for _ in 0..sessions {
            let conn = McpToolSource::http(url.clone())
                .with_era(ProtocolEra::Initialize)
                .connect()
                .await
                .expect("test setup");
            let mut args = Map::new();
            args.insert("text".into(), json!("hi"));
            assert_eq!(
                conn.call("echo", args, &ToolContext::new()).await.output,
                "hi"
            );
            conns.push(conn);
        }
        assert_eq!(
            settle(&live, baseline + sessions).await,
            baseline + sessions,
            "one subscriber per open session"
        );
        for conn in conns {
            conn.close();
            conn.closed().await;
        }
        assert_eq!(
            settle(&live, baseline).await,
            baseline,
            "{sessions} closed sessions still hold their list_changed tasks"
        );
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_closed_mid_call_leave_nothing_subscribed() {
    let (live, url, stop) = server().await;
    let baseline = live.subscribers();
    for _ in 0..10 {
        let conn = McpToolSource::http(url.clone())
            .with_era(ProtocolEra::Initialize)
            .connect()
            .await
            .expect("test setup");
        let ctx = ToolContext::new();
        let call = conn.call("slow", Map::new(), &ctx);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), call)
                .await
                .is_err(),
            "the slow call is still running when the client goes"
        );
        conn.close();
    }
    assert_eq!(settle(&live, baseline).await, baseline);
    stop.cancel();
}

/// Review 27: a background job started in an HTTP session ran on to its
/// 1 h cap after the session ended (its client's close, or its idle
/// timeout), out of every later request's reach — the session's trace id
/// holds 128 random bits. It now ends with the session; another session's
/// job runs on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_background_jobs_end_with_the_session() {
    use tool_core::jobs::{JobEnd, JobRegistry, JobStatus};
    let dir = tempfile::tempdir().expect("test setup");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).expect("test setup");
    let jobs = JobRegistry::new(
        std::sync::Arc::new(tool_core::state::FileStore::new(dir.path().join("state"))),
        dir.path().join("jobs"),
    );
    let mut registry = ToolRegistry::new();
    let root = workspace.clone();
    let spawn = Tool::new(
        ToolSpec::new("spawn", "Start a job.", json!({"type": "object"})),
        move |_args: Map<String, Value>, ctx: ToolContext| {
            let root = root.clone();
            async move {
                let jobs = JobRegistry::of_context(&ctx).expect("the test's registry");
                let key = JobRegistry::key(ctx.trace_id(), &root).expect("a key");
                let (job, token) = jobs.start_local(&key, "agent", "waits").expect("starts");
                let mut writer = job.writer().expect("a writer");
                std::thread::spawn(move || {
                    let until = Instant::now() + Duration::from_secs(60);
                    while !token.is_cancelled() && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    let _ = writer.finish(JobEnd::Killed, 130);
                });
                ToolResult::ok(format!(
                    "{} {}",
                    job.id(),
                    ctx.trace_id().unwrap_or_default()
                ))
            }
        },
    )
    .expect("test setup");
    registry.register(spawn).expect("test setup");
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(LiveRegistry::new(registry))
        .with_context(ToolContext::new().with_state(jobs.clone()))
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .expect("test setup");
    let url = format!("http://{addr}/mcp");
    let mut started = Vec::new();
    let mut conns = Vec::new();
    for _ in 0..2 {
        let conn = McpToolSource::http(url.clone())
            .with_era(ProtocolEra::Initialize)
            .connect()
            .await
            .expect("test setup");
        let out = conn
            .call("spawn", Map::new(), &ToolContext::new())
            .await
            .output;
        let (id, trace) = out.split_once(' ').expect("id and trace");
        assert!(trace.contains("mcp-session-"), "{out}");
        let key = JobRegistry::key(Some(trace), &workspace).expect("a key");
        started.push((key, id.to_owned()));
        conns.push(conn);
    }
    let status = |n: usize| {
        let (key, id) = &started[n];
        jobs.view(key, id).expect("a record").status
    };
    assert_eq!(status(0), JobStatus::Running);
    let second = conns.pop().expect("two sessions");
    let first = conns.pop().expect("two sessions");
    first.close();
    first.closed().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while status(0) == JobStatus::Running {
        assert!(
            Instant::now() < deadline,
            "the closed session's job still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status(0), JobStatus::Killed);
    assert_eq!(
        status(1),
        JobStatus::Running,
        "the open session's job runs on"
    );
    second.close();
    second.closed().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while status(1) == JobStatus::Running {
        assert!(
            Instant::now() < deadline,
            "the second session's job still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (_, id) in &started {
        JobRegistry::forget_local(id);
    }
    stop.cancel();
}
