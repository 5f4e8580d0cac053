//! The `agent` and `evaluate` tools with a scripted model.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tool_agent::subagent::{Preset, Presets, SubAgents, TraceStore};
use tool_agent::{Message, ScriptedClient, ScriptedTurn};
use tool_core::format::ToolCall;
use tool_core::{Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};

fn base_tools() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let schema = json!({"type": "object", "properties": {}});
    for (name, read_only) in [
        ("read_file", true),
        ("grep_content", true),
        ("write_file", false),
    ] {
        let mut spec = ToolSpec::new(name, "A tool.", schema.clone());
        spec.flags.read_only = read_only;
        let n = name.to_owned();
        r.register(
            Tool::new(spec, move |_: Map<String, Value>, _| {
                let n = n.clone();
                async move { ToolResult::ok(format!("{n} ran")) }
            })
            .unwrap(),
        )
        .unwrap();
    }
    r
}

fn parent(sub: &Arc<SubAgents>) -> ToolRegistry {
    let mut r = base_tools();
    r.register(sub.clone().agent_tool().unwrap()).unwrap();
    r.register(sub.clone().evaluate_tool().unwrap()).unwrap();
    r
}

async fn call(r: &ToolRegistry, tool: &str, args: Value, ctx: &ToolContext) -> (ToolResult, Value) {
    let result = r.execute(tool, args, ctx).await;
    let v = serde_json::from_str(&result.output).unwrap_or(Value::Null);
    (result, v)
}

#[tokio::test]
async fn delegate_runs_one_sub_agent_without_agent_and_evaluate() {
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([ToolCall::new("c1", "write_file", "{}")]),
        ScriptedTurn::text("wrote it"),
    ]));
    let sub = Arc::new(SubAgents::with_shared_client(model.clone(), parent_less()));
    let tools = parent(&sub);
    let ctx = ToolContext::new().with_trace_id("main");
    let (result, v) = call(&tools, "agent", json!({"task": "write the file"}), &ctx).await;
    assert!(result.is_ok(), "{}", result.model_text());
    let r = &v["results"][0];
    assert_eq!(
        (
            r["text"].as_str(),
            r["turns"].as_u64(),
            r["tool_calls"].as_u64()
        ),
        (Some("wrote it"), Some(2), Some(1))
    );
    assert_eq!(r["stop"], "answered");
    let id = r["trace_id"].as_str().unwrap();
    assert!(
        id.starts_with("main@delegate-1-") && id.contains("-001-"),
        "{id}"
    );
    let seen = model.seen();
    assert_eq!(
        seen[0].tool_names,
        ["grep_content", "read_file", "write_file"]
    );
    assert!(seen[0].system.as_deref().unwrap().contains("sub-agent"));
    // The trace is stored: task, calls, results, answer.
    assert_eq!(sub.trace_store().get(id).unwrap().messages.len(), 4);
}

/// The parent's tools as a host hands them to `SubAgents`: its own tools, before `agent` is added.
fn parent_less() -> ToolRegistry {
    base_tools()
}

#[tokio::test]
async fn explore_runs_read_only_sub_agents_in_parallel_with_their_own_messages() {
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("A found"),
        ScriptedTurn::text("B found"),
    ]));
    let sub = Arc::new(SubAgents::with_shared_client(model.clone(), base_tools()));
    let tools = parent(&sub);
    let ctx = ToolContext::new().with_trace_id("main");
    let args = json!({
        "task": ["look at A", "look at B"],
        "messages": [[{"role": "user", "content": "context for A"}], [{"role": "user", "content": "context for B"}]]
    });
    let (result, v) = call(&tools, "agent", args, &ctx).await;
    assert!(result.is_ok(), "{}", result.model_text());
    assert_eq!(v["mode"], "explore");
    let ids: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["trace_id"].as_str().unwrap())
        .collect();
    assert!(
        ids[0].starts_with("main@explore-1-") && ids[1].starts_with("main@explore-2-"),
        "{ids:?}"
    );
    for s in model.seen() {
        assert_eq!(
            s.tool_names,
            ["grep_content", "read_file"],
            "read-only tools only"
        );
        assert_eq!(s.messages, 2, "its own context message, then the task");
    }
    let stored = sub.trace_store().get(ids[1]).unwrap();
    assert_eq!(stored.messages[0], Message::user("context for B"));
    assert_eq!(stored.mode, "explore");
}

#[tokio::test]
async fn continue_from_resumes_a_sub_trace_from_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(TraceStore::with_dir(dir.path()).unwrap());
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("first"),
        ScriptedTurn::text("second"),
    ]));
    let sub = Arc::new(SubAgents::with_shared_client(model.clone(), base_tools()).store(store));
    let tools = parent(&sub);
    let ctx = ToolContext::new().with_trace_id("main");
    let (_, v) = call(&tools, "agent", json!({"task": "part one"}), &ctx).await;
    let id = v["results"][0]["trace_id"].as_str().unwrap().to_owned();

    // A new process: a fresh store on the same folder.
    let sub2 = Arc::new(
        SubAgents::with_shared_client(model.clone(), base_tools())
            .store(Arc::new(TraceStore::with_dir(dir.path()).unwrap())),
    );
    let tools2 = parent(&sub2);
    let (result, v) = call(
        &tools2,
        "agent",
        json!({"task": "part two", "continue_from": id}),
        &ctx,
    )
    .await;
    assert!(result.is_ok(), "{}", result.model_text());
    assert_eq!(v["results"][0]["trace_id"], id.as_str());
    assert_eq!(v["results"][0]["text"], "second");
    assert_eq!(
        model.seen()[1].messages,
        3,
        "part one, its answer, part two"
    );

    let (result, _) = call(
        &tools2,
        "agent",
        json!({"task": ["a", "b"], "continue_from": id}),
        &ctx,
    )
    .await;
    assert!(
        result
            .model_text()
            .contains("give `task` as a single string"),
        "{}",
        result.model_text()
    );
    let (result, _) = call(
        &tools2,
        "agent",
        json!({"task": "x", "continue_from": "nope"}),
        &ctx,
    )
    .await;
    assert!(
        result.is_error() && result.model_text().contains("no sub-trace `nope`"),
        "{}",
        result.model_text()
    );
}

/// Issue 23 item 14: in a host that shares one `SubAgents` between traces,
/// one trace cannot continue (and so read) another's sub-agent, with
/// `agent` or `evaluate`; and ids end in 128 random bits.
#[tokio::test]
async fn continue_from_is_refused_for_another_traces_sub_agent() {
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("alice's secret plan"),
        ScriptedTurn::text("alice continues"),
    ]));
    let sub = Arc::new(
        SubAgents::with_shared_client(model.clone(), base_tools()).goal("g", "A plan exists."),
    );
    let tools = parent(&sub);
    let alice = ToolContext::new().with_trace_id("alice");
    let mallory = ToolContext::new().with_trace_id("mallory");
    let (_, v) = call(&tools, "agent", json!({"task": "plan"}), &alice).await;
    let id = v["results"][0]["trace_id"].as_str().unwrap().to_owned();
    let random = id.rsplit('-').next().unwrap();
    assert_eq!(random.len(), 32, "{id}");
    assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");

    for (tool, args) in [
        ("agent", json!({"task": "tell me", "continue_from": id})),
        (
            "evaluate",
            json!({"continue_from": id, "target_goal_id": "g"}),
        ),
    ] {
        let (result, _) = call(&tools, tool, args, &mallory).await;
        let text = result.model_text();
        assert!(result.is_error(), "{tool}: {text}");
        assert!(
            text.contains(&format!("no sub-trace `{id}` to continue in this trace")),
            "{tool}: {text}"
        );
        assert!(!text.contains("secret plan"), "{tool}: {text}");
    }
    assert_eq!(model.seen().len(), 1, "mallory's calls reached no model");

    // Alice herself still continues it.
    let (result, v) = call(
        &tools,
        "agent",
        json!({"task": "go on", "continue_from": id}),
        &alice,
    )
    .await;
    assert!(result.is_ok(), "{}", result.model_text());
    assert_eq!(v["results"][0]["text"], "alice continues");
}

#[tokio::test]
async fn presets_choose_prompt_tools_and_skills() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("review.prompt"), "You review code.").unwrap();
    std::fs::write(
        dir.path().join("presets.json"),
        r#"{"reviewer": {"system_prompt_file": "review.prompt", "allow": ["read_*", "write_*"], "deny": ["write_*"], "skills": ["style"]}}"#,
    )
    .unwrap();
    let presets = Presets::from_file(dir.path().join("presets.json")).unwrap();
    let skills: BTreeMap<String, String> = [
        ("style".to_owned(), "Prefer short functions.".to_owned()),
        ("tests".to_owned(), "Test edges.".to_owned()),
    ]
    .into();
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("ok"),
        ScriptedTurn::text("ok"),
    ]));
    let sub = Arc::new(
        SubAgents::with_shared_client(model.clone(), base_tools())
            .presets(presets)
            .skills(skills),
    );
    let tools = parent(&sub);
    let ctx = ToolContext::new();
    let (result, _) = call(
        &tools,
        "agent",
        json!({"task": "review", "agent_type": "reviewer"}),
        &ctx,
    )
    .await;
    assert!(result.is_ok(), "{}", result.model_text());
    let (result, _) = call(
        &tools,
        "agent",
        json!({"task": "review", "agent_type": "reviewer", "skills": ["tests"]}),
        &ctx,
    )
    .await;
    assert!(result.is_ok(), "{}", result.model_text());
    let seen = model.seen();
    assert_eq!(seen[0].tool_names, ["read_file"]);
    let system = seen[0].system.as_deref().unwrap();
    assert!(
        system.starts_with("You review code.") && system.contains("Prefer short functions."),
        "{system}"
    );
    let system = seen[1].system.as_deref().unwrap();
    assert!(
        system.contains("Test edges.") && !system.contains("Prefer short"),
        "the call's skills replace the preset's"
    );

    let (result, _) = call(
        &tools,
        "agent",
        json!({"task": "x", "agent_type": "reviewr"}),
        &ctx,
    )
    .await;
    assert!(
        result.model_text().contains("did you mean `reviewer`"),
        "{}",
        result.model_text()
    );
    let (result, _) = call(
        &tools,
        "agent",
        json!({"task": "x", "skills": ["nope"]}),
        &ctx,
    )
    .await;
    assert!(
        result.model_text().contains("unknown skill `nope`"),
        "{}",
        result.model_text()
    );
    let err = Presets::from_json(
        r#"{"p": {"system_prompt": "a", "system_prompt_file": "b"}}"#,
        None,
    )
    .unwrap_err();
    assert!(err.contains("keep one"), "{err}");
    let err = Presets::from_json(r#"{"p": {"prompt": "a"}}"#, None).unwrap_err();
    assert!(err.contains("unknown field `prompt`"), "{err}");
    assert!(
        Presets::new()
            .get("x")
            .unwrap_err()
            .contains("defines no presets")
    );
    let _ = Preset::new("x").allow(["a"]).deny(["b"]).skills(["c"]);
}

#[tokio::test]
async fn bad_arguments_are_explained() {
    let sub = Arc::new(SubAgents::new(ScriptedClient::new([]), base_tools()));
    let tools = parent(&sub);
    let ctx = ToolContext::new();
    for (args, expect) in [
        // Shapes are the typed path's: the pipeline's own messages.
        (
            json!({}),
            "Missing required parameter `task` of `agent`: expected a string or an array.",
        ),
        (
            json!({"task": 3}),
            "Invalid value for parameter `task` of `agent`: expected a string or an array, but received an integer 3.",
        ),
        (
            json!({"task": ["a", 2]}),
            "Invalid value for parameter `task` of `agent`: expected a string or an array",
        ),
        (
            json!({"task": "a", "messages": "hi"}),
            "Invalid value for parameter `messages` of `agent`",
        ),
        (
            json!({"task": "a", "skills": 5}),
            "Invalid value for parameter `skills` of `agent`",
        ),
        (
            json!({"task": "a", "tasks": ["b"]}),
            "Unknown parameter `tasks` is not accepted by `agent`.",
        ),
        // Limits and meaning are the tool's.
        (json!({"task": []}), "1 to 16 tasks"),
        (json!({"task": "  "}), "`task` is empty"),
        (
            json!({"task": "a", "messages": [{"role": "system", "content": "x"}]}),
            "`messages[0].role` is `system`; use `user` or `assistant`",
        ),
        // One string is read as a one-item list, with a note (argument repair).
        (
            json!({"task": "a", "skills": "x"}),
            "read as the list [\"x\"]; send a list",
        ),
    ] {
        let (result, _) = call(&tools, "agent", args.clone(), &ctx).await;
        assert!(
            result.is_error() && result.model_text().contains(expect),
            "{args}: {}",
            result.model_text()
        );
    }
}

#[tokio::test]
async fn evaluate_judges_against_the_hosts_goal() {
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([ToolCall::new("c", "read_file", "{}")]),
        ScriptedTurn::text(
            r#"{"verdict": "fail", "reason": "tests missing", "suggestions": ["add a test"]}"#,
        ),
        ScriptedTurn::text("pass, I think"),
    ]));
    let sub = Arc::new(
        SubAgents::with_shared_client(model.clone(), base_tools())
            .goal("g1", "The parser handles empty input."),
    );
    let tools = parent(&sub);
    let ctx = ToolContext::new().with_trace_id("main").with_goal_id("g1");
    let args = json!({"messages": [{"role": "user", "content": "I changed parse() to return None on empty input."}]});
    let (result, v) = call(&tools, "evaluate", args, &ctx).await;
    assert!(result.is_ok(), "{}", result.model_text());
    assert_eq!(
        (v["verdict"].as_str(), v["reason"].as_str()),
        (Some("fail"), Some("tests missing"))
    );
    assert_eq!(v["suggestions"], json!(["add a test"]));
    assert_eq!(v["goal_id"], "g1");
    assert!(
        v["trace_id"]
            .as_str()
            .unwrap()
            .starts_with("main@evaluate-1-")
    );
    let seen = model.seen();
    assert_eq!(
        seen[0].tool_names,
        ["grep_content", "read_file"],
        "read-only"
    );
    let Some(Message::User { content }) = &seen[0].last else {
        panic!()
    };
    assert!(
        content.contains("The parser handles empty input."),
        "{content}"
    );

    // The goal can come from the context instead; the model never supplies it.
    let ctx =
        ToolContext::new().with_value("goal", json!({"id": "g9", "description": "Docs build."}));
    let (_, v) = call(&tools, "evaluate", json!({}), &ctx).await;
    assert_eq!(
        (v["verdict"].as_str(), v["goal_id"].as_str()),
        (Some("unclear"), Some("g9"))
    );
    let (result, _) = call(
        &tools,
        "evaluate",
        json!({"target_goal_id": "zzz"}),
        &ToolContext::new(),
    )
    .await;
    assert!(
        result.model_text().contains("no goal `zzz` is registered")
            && result.model_text().contains("`g1`"),
        "{}",
        result.model_text()
    );
}

#[test]
fn the_sub_agent_tools_schemas_come_from_their_argument_types() {
    let sub = Arc::new(SubAgents::new(ScriptedClient::new([]), base_tools()));
    let agent = sub.clone().agent_tool().unwrap();
    let evaluate = sub.evaluate_tool().unwrap();
    // Input examples (issue 27): 1 to 3 each, using only the rendered
    // schema's properties and giving every required one.
    for tool in [&agent, &evaluate] {
        let spec = tool.spec();
        assert!(
            (1..=3).contains(&spec.input_examples.len()),
            "{}: {}",
            spec.name,
            spec.input_examples.len()
        );
        let properties = spec.parameters["properties"].as_object().unwrap();
        let required = spec.parameters["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for example in &spec.input_examples {
            let example = example.as_object().unwrap();
            assert!(
                example.keys().all(|k| properties.contains_key(k)),
                "{example:?}"
            );
            assert!(
                required
                    .iter()
                    .all(|r| example.contains_key(r.as_str().unwrap())),
                "{example:?}"
            );
        }
    }
    let a = &agent.spec().parameters;
    assert_eq!(a["required"], json!(["task"]));
    assert_eq!(a["additionalProperties"], json!(false));
    assert!(a.get("$defs").is_none(), "{a:#}");
    assert_eq!(
        a["properties"]["task"]["anyOf"][1],
        json!({"type": "array", "items": {"type": "string"}, "description": "Several tasks, explored in parallel by read-only sub-agents."})
    );
    let message = &a["properties"]["messages"]["anyOf"][0]["anyOf"][0]["items"];
    assert_eq!(
        message["properties"]["role"]["enum"],
        json!(["user", "assistant"])
    );
    assert_eq!(message["required"], json!(["role", "content"]));
    let e = &evaluate.spec().parameters;
    assert_eq!(e["required"], json!([]));
    assert_eq!(
        e["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["messages", "target_goal_id", "continue_from"]
    );
    assert_eq!(
        e["properties"]["messages"]["items"]["properties"]["role"]["enum"],
        json!(["user", "assistant"])
    );
}
/// `agent` with `background: true` returns a job id at once; `job_output`
/// (the built-in) reads the summary when it ends, `job_list` lists it, and
/// `job_kill` cancels a sub-agent that is still working.
#[tokio::test]
async fn a_background_sub_agent_is_a_job_read_listed_and_killed_through_the_job_tools() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn tool_core::state::StateStore> =
        Arc::new(tool_core::state::FileStore::new(dir.path().join("state")));
    let jobs = tool_core::jobs::JobRegistry::new(store, dir.path().join("jobs"));
    let ctx = tool_builtins::context(dir.path())
        .unwrap()
        .with_trace_id("main-bg")
        .with_value(
            "workspace",
            dir.path()
                .canonicalize()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
        )
        .with_state(jobs);
    let builtins = tool_builtins::registry();
    let model = Arc::new(ScriptedClient::new([ScriptedTurn::text(
        "the answer is 42",
    )]));
    let sub = Arc::new(SubAgents::with_shared_client(model, parent_less()));
    let tools = parent(&sub);
    let started = tools
        .execute(
            "agent",
            json!({"task": "find the answer", "background": true}),
            &ctx,
        )
        .await;
    assert!(started.is_ok(), "{}", started.model_text());
    let id = started.metadata["job_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("job-"), "{id}");
    let read = builtins
        .execute("job_output", json!({"job_id": id, "wait": 10}), &ctx)
        .await;
    assert!(read.is_ok(), "{}", read.model_text());
    assert_eq!(read.metadata["status"], "exited", "{}", read.output);
    assert_eq!(read.metadata["exit_code"], 0);
    assert!(read.output.contains("the answer is 42"), "{}", read.output);
    let list = builtins.execute("job_list", json!({}), &ctx).await;
    assert!(
        list.output
            .contains("(agent, find the answer): exited with code 0"),
        "{}",
        list.output
    );

    // A sub-agent whose model never answers is cancelled by job_kill.
    let stuck = Arc::new(SubAgents::with_shared_client(
        Arc::new(tool_agent::ScriptedClient::new([ScriptedTurn::calls([
            ToolCall::new("c1", "slow", "{}"),
        ])])),
        slow_tools(),
    ));
    let tools = parent(&stuck);
    let started = tools
        .execute(
            "agent",
            json!({"task": "wait forever", "background": true}),
            &ctx,
        )
        .await;
    let id = started.metadata["job_id"].as_str().unwrap().to_owned();
    let killed = builtins
        .execute("job_kill", json!({"job_id": id}), &ctx)
        .await;
    if killed.metadata["status"] != "killed" {
        let read = builtins
            .execute("job_output", json!({"job_id": id}), &ctx)
            .await;
        panic!(
            "not killed: {}\noutput: {}",
            killed.model_text(),
            read.output
        );
    }
    let read = builtins
        .execute("job_output", json!({"job_id": id}), &ctx)
        .await;
    assert!(
        read.output.contains("cancelled (job_kill)"),
        "{}",
        read.output
    );
}

/// A registry with one tool, `slow`, that sleeps for an hour.
fn slow_tools() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let spec = ToolSpec::new(
        "slow",
        "Sleeps.",
        json!({"type": "object", "properties": {}}),
    );
    r.register(
        Tool::new(spec, |_: Map<String, Value>, _| async {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            ToolResult::ok("woke")
        })
        .unwrap(),
    )
    .unwrap();
    r
}

/// The goal tree of tool-builtins' `goal` tool: `agent` marks the goal it
/// names with its sub-traces, `evaluate` judges against the goal's
/// description and criteria from the tree and marks it too; an unknown
/// goal is refused before any model turn.
#[tokio::test]
async fn agent_and_evaluate_use_the_traces_goal_tree() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn tool_core::state::StateStore> =
        Arc::new(tool_core::state::FileStore::new(dir.path().join("state")));
    let ctx = tool_builtins::context(dir.path())
        .unwrap()
        .with_trace_id("main")
        .with_state(store);
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::text("parser fixed"),
        ScriptedTurn::text(r#"{"verdict": "pass", "reason": "both criteria hold"}"#),
    ]));
    let sub = Arc::new(SubAgents::with_shared_client(model.clone(), base_tools()));
    let mut tools = parent(&sub);
    let builtins = tool_builtins::registry();
    tools.merge(&builtins, tool_core::OnConflict::Skip).unwrap();
    let added = tools
        .execute(
            "goal",
            json!({"action": "add", "description": "Fix the CSV parser",
                   "criteria": ["quoted commas parse", "the suite passes"]}),
            &ctx,
        )
        .await;
    assert_eq!(added.metadata["goal_id"], "1", "{added:?}");

    let (result, v) = call(
        &tools,
        "agent",
        json!({"task": "fix the parser", "goal_id": "1"}),
        &ctx,
    )
    .await;
    assert!(result.is_ok(), "{}", result.model_text());
    assert_eq!(v["goal_id"], "1");
    let first = v["results"][0]["trace_id"].as_str().unwrap().to_owned();
    let goal = tool_builtins::goal::goal_of(&ctx, "1").unwrap().unwrap();
    assert_eq!(goal.kind, tool_builtins::GoalKind::AgentCall);
    assert_eq!(goal.status, tool_builtins::GoalStatus::InProgress);
    assert_eq!(goal.agent_call_mode.as_deref(), Some("delegate"));
    assert_eq!(goal.sub_trace_ids, std::slice::from_ref(&first));

    let (result, v) = call(
        &tools,
        "evaluate",
        json!({"target_goal_id": "1", "messages": [{"role": "user", "content": "parser fixed"}]}),
        &ctx,
    )
    .await;
    assert!(result.is_ok(), "{}", result.model_text());
    assert_eq!(
        (v["verdict"].as_str(), v["goal_id"].as_str()),
        (Some("pass"), Some("1"))
    );
    let Some(Message::User { content }) = &model.seen()[1].last else {
        panic!("the task is the last message")
    };
    assert_eq!(
        content,
        "Goal `1`: Fix the CSV parser\nCriteria:\n- quoted commas parse\n- the suite passes\n\n\
         Judge whether the result shown above meets this goal."
    );
    let goal = tool_builtins::goal::goal_of(&ctx, "1").unwrap().unwrap();
    assert_eq!(goal.agent_call_mode.as_deref(), Some("evaluate"));
    assert_eq!(goal.sub_trace_ids.len(), 2);
    assert_eq!(goal.sub_trace_ids[0], first);
    assert!(
        goal.sub_trace_ids[1].starts_with("main@evaluate-"),
        "{goal:?}"
    );

    // An unknown goal: refused before the model is asked anything.
    let (result, _) = call(
        &tools,
        "agent",
        json!({"task": "anything", "goal_id": "4"}),
        &ctx,
    )
    .await;
    assert!(
        result
            .model_text()
            .contains("There is no goal `4` in this trace; its goals are 1"),
        "{}",
        result.model_text()
    );
    assert_eq!(model.seen().len(), 2);
}
