//! Registry views (rules, composition, live updates, execution scoped to
//! the view) and deferred loading with `tool_search` (select, BM25 ranking,
//! no-match answers, loaded sets per trace, cache-friendly renderings).

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use serde_json::{Map, Value, json};
use tool_core::format::Format;
use tool_core::format::ServerSearch;
use tool_core::search::SearchIndex;
use tool_core::view::InlineSchemas;
use tool_core::{
    ErrorKind, LiveRegistry, RegistryView, TOOL_SEARCH, Tool, ToolContext, ToolKind, ToolRegistry,
    ToolResult, ToolSpec,
};

fn tool(name: &str, description: &str, kind: ToolKind, tags: &[&str], read_only: bool) -> Tool {
    let mut spec = ToolSpec::new(
        name,
        description,
        json!({"type": "object", "properties": {"text": {"type": "string", "description": "Any text."}}}),
    )
    .with_kind(kind)
    .with_tags(tags.iter().copied());
    if read_only {
        spec = spec.read_only();
    }
    let owned = name.to_owned();
    Tool::new(spec, move |_: Map<String, Value>, _| {
        let owned = owned.clone();
        async move { ToolResult::ok(format!("ran {owned}")) }
    })
    .unwrap()
}

fn live() -> LiveRegistry {
    let mut r = ToolRegistry::new();
    for t in [
        tool(
            "read_file",
            "Read a text file.",
            ToolKind::Read,
            &["fs"],
            true,
        ),
        tool(
            "write_file",
            "Write a text file.",
            ToolKind::Write,
            &["fs"],
            false,
        ),
        tool(
            "bash_command",
            "Run a shell command.",
            ToolKind::Exec,
            &["shell"],
            false,
        ),
        tool(
            "github__create_issue",
            "Open a new issue in a GitHub repository.\nMore text.",
            ToolKind::Network,
            &["github", "issues"],
            false,
        ),
        tool(
            "github__list_issues",
            "List the issues of a GitHub repository.",
            ToolKind::Network,
            &["github", "issues"],
            true,
        ),
        tool(
            "github__merge_pull_request",
            "Merge a pull request.",
            ToolKind::Network,
            &["github"],
            false,
        ),
        tool(
            "slack__post_message",
            "Post a message to a Slack channel.",
            ToolKind::Network,
            &["chat"],
            false,
        ),
    ] {
        r.register(t).unwrap();
    }
    LiveRegistry::new(r)
}

fn names(view: &RegistryView) -> Vec<String> {
    view.names()
}

fn rendered_names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn rules_select_tools_and_compose() {
    let live = live();
    let all = RegistryView::new(live.clone());
    assert_eq!(all.names().len(), 7);
    let github = all.clone().allow(["github__*"]);
    assert_eq!(
        names(&github),
        [
            "github__create_issue",
            "github__list_issues",
            "github__merge_pull_request"
        ]
    );
    // A view of a view keeps the first view's rules.
    let read_only_github = github.clone().read_only();
    assert_eq!(names(&read_only_github), ["github__list_issues"]);
    let no_merge = github.clone().without(&["github__merge_pull_request"]);
    assert_eq!(
        names(&no_merge),
        ["github__create_issue", "github__list_issues"]
    );
    let denied = all.clone().deny(["*_file", "slack__*"]);
    assert_eq!(
        names(&denied),
        [
            "bash_command",
            "github__create_issue",
            "github__list_issues",
            "github__merge_pull_request"
        ]
    );
    let fs = all.clone().tags(["fs", "shell"]);
    assert_eq!(names(&fs), ["bash_command", "read_file", "write_file"]);
    let kinds = all.clone().kinds([ToolKind::Read, ToolKind::Write]);
    assert_eq!(names(&kinds), ["read_file", "write_file"]);
    // Two allow rules narrow each other; one rule's patterns widen.
    let either = all.clone().allow(["read_*", "slack__*"]);
    assert_eq!(names(&either), ["read_file", "slack__post_message"]);
    assert!(either.clone().allow(["github__*"]).names().is_empty());
    // The first view is not changed by the ones built from it.
    assert_eq!(github.names().len(), 3);
}

#[test]
fn views_follow_the_live_registry() {
    let live = live();
    let github = RegistryView::new(live.clone()).allow(["github__*"]);
    assert_eq!(github.names().len(), 3);
    let v0 = github.version();
    live.update(|r| {
        r.register(tool(
            "github__fork",
            "Fork a repository.",
            ToolKind::Network,
            &[],
            false,
        ))?;
        r.register(tool(
            "gitlab__fork",
            "Fork a project.",
            ToolKind::Network,
            &[],
            false,
        ))?;
        r.remove("github__list_issues");
        Ok::<_, tool_core::RegistryError>(())
    })
    .unwrap();
    assert_eq!(
        names(&github),
        [
            "github__create_issue",
            "github__fork",
            "github__merge_pull_request"
        ]
    );
    assert_eq!(github.version(), v0 + 1);
    // Materialised once per version: the same registry until the next change.
    assert!(std::sync::Arc::ptr_eq(
        &github.registry(),
        &github.registry()
    ));
    let json = github.schemas_in(Format::Json).unwrap();
    assert_eq!(rendered_names(&json), github.names());
}

#[tokio::test]
async fn execute_refuses_tools_outside_the_view_and_suggests_only_inside() {
    let view = RegistryView::new(live()).allow(["github__*"]);
    let ctx = ToolContext::new();
    let ok = view.execute("github__list_issues", json!({}), &ctx).await;
    assert_eq!(ok.output, "ran github__list_issues");
    let outside = view.execute("read_file", json!({}), &ctx).await;
    let error = outside.error.unwrap();
    assert_eq!(error.kind, ErrorKind::UnknownTool);
    assert!(!error.message.contains("read_file`?"), "{}", error.message);
    // A near miss of an outside tool is not suggested; one of an inside tool is.
    let typo = view
        .execute("read_fil", json!({}), &ctx)
        .await
        .error
        .unwrap();
    assert!(!typo.message.contains("`read_file`"), "{}", typo.message);
    let near = view
        .execute("github__list_issue", json!({}), &ctx)
        .await
        .error
        .unwrap();
    assert!(
        near.message.contains("Did you mean `github__list_issues`"),
        "{}",
        near.message
    );
    // execute_call and execute_batch are scoped the same way.
    let call = tool_core::ToolCall::new("c1", "bash_command", json!({}));
    let r = view.execute_call(&call, &ctx).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::UnknownTool);
    let batch = view
        .execute_batch(
            vec![
                ("github__list_issues", json!({})),
                ("write_file", json!({})),
            ],
            &ctx,
        )
        .await;
    assert!(batch[0].error.is_none());
    assert_eq!(
        batch[1].error.as_ref().unwrap().kind,
        ErrorKind::UnknownTool
    );
}

fn deferred_view() -> RegistryView {
    RegistryView::new(live())
        .defer(["*"])
        .keep_loaded(["read_file", "bash_command"])
}

async fn search(view: &RegistryView, trace: &str, query: Value) -> ToolResult {
    let ctx = ToolContext::new().with_trace_id(trace);
    view.execute(TOOL_SEARCH, query, &ctx).await
}

#[tokio::test]
async fn select_loads_exact_names_for_the_trace_only() {
    let view = deferred_view();
    assert!(view.contains(TOOL_SEARCH));
    assert!(view.is_deferred("github__create_issue"));
    assert!(!view.is_deferred("read_file"));
    let first = view.schemas_for(Format::Json, Some("t1")).unwrap();
    assert_eq!(
        rendered_names(&first),
        ["bash_command", "read_file", TOOL_SEARCH]
    );

    let r = search(
        &view,
        "t1",
        json!({"query": "select:slack__post_message, github__create_issue"}),
    )
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(
        r.metadata["loaded"],
        json!(["slack__post_message", "github__create_issue"])
    );
    assert!(
        r.output
            .contains("- slack__post_message (loaded now): Post a message to a Slack channel."),
        "{}",
        r.output
    );
    // First description line only.
    assert!(
        r.output
            .contains("Open a new issue in a GitHub repository.\n"),
        "{}",
        r.output
    );
    assert!(!r.output.contains("More text."), "{}", r.output);
    assert_eq!(
        view.loaded(Some("t1")),
        ["slack__post_message", "github__create_issue"]
    );
    assert!(
        view.loaded(Some("t2")).is_empty(),
        "another trace loads nothing"
    );
    assert!(view.loaded(None).is_empty());

    let next = view.schemas_for(Format::Json, Some("t1")).unwrap();
    assert_eq!(
        rendered_names(&next),
        [
            "bash_command",
            "read_file",
            TOOL_SEARCH,
            "slack__post_message",
            "github__create_issue"
        ]
    );
    let other = view.schemas_for(Format::Json, Some("t2")).unwrap();
    assert_eq!(rendered_names(&other), rendered_names(&first));

    // Loading again loads nothing new; a name outside the view is named as such.
    let again = search(
        &view,
        "t1",
        json!({"query": "select:slack__post_message,nope"}),
    )
    .await;
    assert_eq!(again.metadata["loaded"], json!([]));
    assert!(
        again.output.contains("(already loaded)"),
        "{}",
        again.output
    );
    assert!(
        again.output.contains("- nope: no such tool"),
        "{}",
        again.output
    );
    let unknown = search(&view, "t1", json!({"query": "select:github__create_isue"})).await;
    assert!(
        unknown
            .output
            .contains("No tool is called `github__create_isue`"),
        "{}",
        unknown.output
    );
    assert!(
        unknown.output.contains("select:github__create_issue"),
        "{}",
        unknown.output
    );
}

#[tokio::test]
async fn text_queries_are_ranked_and_loaded() {
    let view = deferred_view();
    let r = search(
        &view,
        "t",
        json!({"query": "open a new GitHub issue", "max_results": 2}),
    )
    .await;
    let matches = r.metadata["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2);
    assert_eq!(matches[0], "github__create_issue");
    assert_eq!(matches[1], "github__list_issues");
    assert!(r.output.starts_with("2 tools found:\n"), "{}", r.output);
    assert_eq!(
        view.loaded(Some("t")),
        ["github__create_issue", "github__list_issues"]
    );
    // Pure search: no load.
    let hits = view.search("post to a slack channel", 5);
    assert_eq!(hits[0].name, "slack__post_message");
    assert_eq!(view.loaded(Some("t")).len(), 2);
}

#[tokio::test]
async fn no_match_lists_weak_matches_and_says_so() {
    // Issue 31: never an empty list when tools exist; the answer says the
    // matches are weak, and so does `metadata.weak`.
    let view = deferred_view();
    let r = search(&view, "t", json!({"query": "zyxwv quantum teleport"})).await;
    assert!(r.error.is_none());
    assert!(
        r.output
            .starts_with("No tool matches the words of `zyxwv quantum teleport` well; the 5 closest (weak matches"),
        "{}",
        r.output
    );
    assert_eq!(r.metadata["weak"], json!(true));
    assert_eq!(r.metadata["matches"].as_array().map(Vec::len), Some(5));
    let r = search(&view, "t2", json!({"query": "create an issue on github"})).await;
    assert_eq!(r.metadata["weak"], json!(false));
}

#[tokio::test]
async fn bad_queries_are_invalid_arguments() {
    let view = deferred_view();
    for bad in [
        json!({}),
        json!({"query": "x", "max_results": 0}),
        json!({"query": "x", "max_results": 51}),
        json!({"query": "x".repeat(2001)}),
        json!({"query": "select:"}),
        json!({"query": "   "}),
    ] {
        let r = search(&view, "t", bad.clone()).await;
        assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments, "{bad}");
    }
}

#[tokio::test]
async fn select_is_case_blind_and_knows_tool_search_itself() {
    let view = deferred_view();
    let r = search(
        &view,
        "case",
        json!({"query": "SELECT:github__create_issue"}),
    )
    .await;
    assert!(r.error.is_none(), "{}", r.output);
    assert_eq!(
        r.metadata["loaded"],
        json!(["github__create_issue"]),
        "{}",
        r.output
    );
    let r = search(&view, "self", json!({"query": "select:tool_search"})).await;
    assert!(r.error.is_none(), "{}", r.output);
    assert!(r.output.contains("is this tool itself"), "{}", r.output);
    assert_eq!(r.metadata.get("loaded"), None);
}

#[tokio::test]
async fn loading_keeps_the_previous_rendering_a_byte_identical_prefix() {
    let view = deferred_view();
    for format in [
        Format::Json,
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: false },
        Format::Anthropic { strict: false },
        Format::Mcp,
    ] {
        let trace = format!("prefix-{}", format.slug());
        let mut previous =
            serde_json::to_string(&*view.schemas_for(format, Some(&trace)).unwrap()).unwrap();
        let always = previous.clone();
        for query in [
            "select:slack__post_message",
            "merge a pull request",
            "select:write_file,github__list_issues",
        ] {
            search(&view, &trace, json!({"query": query})).await;
            let next =
                serde_json::to_string(&*view.schemas_for(format, Some(&trace)).unwrap()).unwrap();
            assert!(
                next.len() > previous.len(),
                "{format}: {query} loaded nothing"
            );
            // The list minus its closing bracket is a prefix of the next list.
            let open = &previous[..previous.len() - 1];
            assert!(next.starts_with(open), "{format}: {previous}\n{next}");
            previous = next;
        }
        // The always-loaded part never moved.
        assert!(
            previous.starts_with(&always[..always.len() - 1]),
            "{format}"
        );
    }
    // Gemini: the declarations of the previous turn are the first ones of the next.
    let gemini = Format::Gemini {
        recursion: Default::default(),
    };
    let before = view.schemas_for(gemini, Some("g")).unwrap();
    search(&view, "g", json!({"query": "select:slack__post_message"})).await;
    let after = view.schemas_for(gemini, Some("g")).unwrap();
    let decls = |v: &Value| v[0]["functionDeclarations"].as_array().unwrap().clone();
    let (b, a) = (decls(&before), decls(&after));
    assert_eq!(a.len(), b.len() + 1);
    assert_eq!(&a[..b.len()], &b[..]);
    assert_eq!(a[b.len()]["name"], "slack__post_message");
}

#[tokio::test]
async fn stateless_hosts_get_definitions_inline_and_nothing_is_loaded() {
    let view = deferred_view();
    let ctx = ToolContext::new().with_state(InlineSchemas(Format::Mcp));
    let r = view
        .execute(
            TOOL_SEARCH,
            json!({"query": "select:github__create_issue"}),
            &ctx,
        )
        .await;
    assert!(r.output.contains("(definition below)"), "{}", r.output);
    let at = r.output.find('[').unwrap();
    let defs: Value = serde_json::from_str(&r.output[at..]).unwrap();
    assert_eq!(defs[0]["name"], "github__create_issue");
    assert_eq!(defs[0]["inputSchema"]["type"], "object");
    assert!(view.loaded(None).is_empty());
    // A deferred tool is called by name without being loaded.
    let call = view.execute("github__create_issue", json!({}), &ctx).await;
    assert_eq!(call.output, "ran github__create_issue");
    let fresh = view.schemas_new_session(Format::Mcp).unwrap();
    assert_eq!(
        rendered_names(&fresh),
        ["bash_command", "read_file", TOOL_SEARCH]
    );
}

#[tokio::test]
async fn anthropic_server_search_is_a_format_that_marks_deferred_tools() {
    let view = deferred_view();
    let bm25 = Format::AnthropicToolSearch {
        strict: false,
        search: ServerSearch::Bm25,
    };
    // Loads through our `tool_search` change nothing: Anthropic's server loads.
    search(&view, "a", json!({"query": "select:slack__post_message"})).await;
    let list = view.schemas_for(bm25, Some("a")).unwrap();
    assert_eq!(list.as_value(), view.schemas_in(bm25).unwrap().as_value());
    let tools = list.as_array().unwrap();
    assert_eq!(
        rendered_names(&Value::Array(tools[..tools.len() - 1].to_vec())),
        [
            "bash_command",
            "github__create_issue",
            "github__list_issues",
            "github__merge_pull_request",
            "read_file",
            "slack__post_message",
            "write_file",
        ],
        "every tool of the view in name order, ours left out"
    );
    let schema = json!({"type": "object", "properties": {"text": {"type": "string", "description": "Any text."}}});
    assert_eq!(
        tools[1],
        json!({
            "name": "github__create_issue",
            "description": "Open a new issue in a GitHub repository.\nMore text.",
            "input_schema": schema,
            "defer_loading": true
        })
    );
    assert_eq!(
        tools[4],
        json!({"name": "read_file", "description": "Read a text file.", "input_schema": schema}),
        "always-loaded tools carry no defer_loading"
    );
    assert_eq!(
        tools.last().unwrap(),
        &json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    let regex = Format::AnthropicToolSearch {
        strict: true,
        search: ServerSearch::Regex,
    };
    let list = view.schemas_for(regex, None).unwrap();
    let tools = list.as_array().unwrap();
    assert_eq!(
        tools.last().unwrap(),
        &json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
    );
    assert_eq!(tools[4]["strict"], true);
    assert_eq!(tools[1]["defer_loading"], true);
    // A registry (nothing deferred) renders the Anthropic list and the server tool.
    let plain = RegistryView::new(live());
    let all = plain.schemas_in(bm25).unwrap();
    let anthropic = plain
        .schemas_in(Format::Anthropic { strict: false })
        .unwrap();
    let all = all.as_array().unwrap();
    assert_eq!(
        &all[..all.len() - 1],
        anthropic.as_array().unwrap().as_slice()
    );
    assert!(all.iter().all(|t| t.get("defer_loading").is_none()));
    assert_eq!(bm25.slug(), "anthropic-tool-search-bm25");
    assert_eq!(
        "anthropic-strict-tool-search-regex".parse::<Format>(),
        Ok(regex)
    );
}

#[tokio::test]
async fn loads_follow_the_registry_and_notify() {
    let live = live();
    let view = RegistryView::new(live.clone()).defer(["github__*"]);
    let mut loads = view.subscribe_loads();
    search(
        &view,
        "t",
        json!({"query": "select:github__merge_pull_request"}),
    )
    .await;
    assert!(loads.has_changed().unwrap());
    loads.mark_unchanged();
    // Nothing new: no notification.
    search(
        &view,
        "t",
        json!({"query": "select:github__merge_pull_request"}),
    )
    .await;
    assert!(!loads.has_changed().unwrap());
    // A loaded tool that leaves the registry leaves the rendering.
    live.update(|r| Ok::<_, ()>(r.remove("github__merge_pull_request").map(|_| ())))
        .unwrap();
    assert!(view.loaded(Some("t")).is_empty());
    let list = view.schemas_for(Format::Json, Some("t")).unwrap();
    assert!(!rendered_names(&list).contains(&"github__merge_pull_request".to_owned()));
    // New deferred tools are found by the index of the new version.
    live.update(|r| {
        r.register(tool(
            "github__star",
            "Star a repository.",
            ToolKind::Network,
            &[],
            false,
        ))
    })
    .unwrap();
    assert_eq!(view.search("star a repository", 1)[0].name, "github__star");
}

/// The evaluation set's tools (`tests/data/tool_search/tools.json`) as specs.
fn eval_specs() -> Vec<ToolSpec> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tool_search/tools.json"
    );
    let defs: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    defs.iter()
        .map(|d| {
            let tags: Vec<String> = d["tags"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            ToolSpec::new(
                d["name"].as_str().unwrap(),
                d["description"].as_str().unwrap(),
                d["parameters"].clone(),
            )
            .with_tags(tags)
        })
        .collect()
}

fn answering(spec: ToolSpec) -> Tool {
    Tool::new(spec, |_: Map<String, Value>, _| async {
        ToolResult::ok("ok")
    })
    .unwrap()
}

#[test]
fn the_index_follows_adds_and_removes_and_ranks_as_a_fresh_build() {
    let specs = eval_specs();
    assert!(specs.len() >= 400, "{}", specs.len());
    let mut first = ToolRegistry::new();
    for spec in &specs[..300] {
        first.register(answering(spec.clone())).unwrap();
    }
    let live = LiveRegistry::new(first);
    let view = RegistryView::new(live.clone())
        .deny(["slack__*"])
        .defer(["*"]);
    // The first search builds the index at version 0.
    assert!(!view.search("create an issue", 5).is_empty());
    // Version 1: 40 tools leave, 100 arrive, 10 are replaced by other specs of the same name.
    live.update(|r| {
        for spec in &specs[100..140] {
            r.remove(&spec.name);
        }
        for spec in &specs[300..400] {
            r.register(answering(spec.clone()))?;
        }
        for spec in &specs[200..210] {
            let mut changed = spec.clone();
            changed.description =
                format!("{} Also archives old calendar entries.", spec.description);
            r.register_with(answering(changed), tool_core::OnConflict::Override)?;
        }
        Ok::<_, tool_core::RegistryError>(())
    })
    .unwrap();
    // Version 2: one more removal and one addition, searched after both.
    live.update(|r| {
        r.remove(&specs[0].name);
        r.register(answering(specs[400].clone()))
    })
    .unwrap();
    let registry = view.registry();
    let fresh = SearchIndex::build(registry.specs().filter(|s| s.name != TOOL_SEARCH));
    assert_eq!(fresh.len(), registry.len() - 1);
    let queries: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tool_search/queries.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut compared = 0;
    for q in queries
        .iter()
        .filter_map(|q| q["query"].as_str())
        .chain(["archives calendar entries"])
    {
        let (got, want) = (view.search(q, 10), fresh.search(q, 10));
        assert_eq!(got.len(), want.len(), "{q}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.name, w.name, "{q}");
            assert!(
                (g.score - w.score).abs() <= 1e-5,
                "{q}: {} vs {}",
                g.score,
                w.score
            );
        }
        compared += got.len();
    }
    assert!(compared > 1000, "{compared} hits compared");
    // The replaced specs were indexed again: their new words find them.
    let hits = view.search("archives calendar entries", 10);
    assert!(hits.iter().any(|h| h.name == specs[200].name), "{hits:?}");
    // Removed tools are gone, denied ones never came in.
    assert!(
        view.search(&specs[120].description, 50)
            .iter()
            .all(|h| h.name != specs[120].name)
    );
    assert!(
        view.search("post a slack message", 50)
            .iter()
            .all(|h| !h.name.starts_with("slack__"))
    );
}

/// `execute_calls` (issue 25, R1): one turn's provider calls in order, each
/// handled as `execute_call` handles it (repairs recorded and told, then
/// "`null` means absent"), on the registry and the same on a view, where a
/// tool outside the view is unknown.
#[tokio::test]
async fn execute_calls_repairs_normalises_and_keeps_call_order() {
    let mut r = ToolRegistry::new();
    let keys = ToolSpec::new(
        "keys",
        "Lists the argument keys.",
        json!({"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}, "required": ["text"]}),
    )
    .read_only();
    r.register(
        Tool::new(keys, |args: Map<String, Value>, _| async move {
            let names: Vec<&str> = args.keys().map(String::as_str).collect();
            ToolResult::ok(names.join(","))
        })
        .unwrap(),
    )
    .unwrap();
    r.register(tool(
        "hidden_tool",
        "Outside the view.",
        ToolKind::Read,
        &["x"],
        true,
    ))
    .unwrap();
    let calls = [
        tool_core::ToolCall::new("c1", "keys", "{\"text\": \"a\tb\", \"n\": null}"),
        tool_core::ToolCall::new("c2", "keys", json!({"text": "x", "n": 3})),
        tool_core::ToolCall::new("c3", "hidden_tool", json!({})),
    ];
    let ctx = ToolContext::new();
    let all = r.execute_calls(&calls, &ctx).await;
    let outputs: Vec<&str> = all.iter().map(|r| r.output.as_str()).collect();
    assert_eq!(outputs, ["text", "text,n", "ran hidden_tool"]);
    assert_eq!(
        all[0].metadata["argument_repairs"][0]["kind"],
        "control_characters_escaped"
    );
    assert_eq!(all[0].notes.len(), 1, "{:?}", all[0].notes);
    assert!(all[1].notes.is_empty());

    let view = RegistryView::new(LiveRegistry::new(r)).allow(["keys"]);
    let scoped = view.execute_calls(&calls, &ctx).await;
    assert_eq!(scoped[0].output, "text");
    assert_eq!(scoped[1].output, "text,n");
    assert_eq!(
        scoped[2].error.as_ref().unwrap().kind,
        ErrorKind::UnknownTool
    );
}

#[tokio::test]
async fn tool_search_takes_typed_arguments_with_the_pipelines_messages() {
    let view = deferred_view();
    let schemas = view.schemas_for(Format::Json, Some("typed")).unwrap();
    let spec = schemas
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == TOOL_SEARCH)
        .unwrap()
        .clone();
    assert_eq!(
        spec["parameters"],
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool should do, in a few words; or `select:` followed by comma-separated tool names."
                },
                "max_results": {
                    "type": "integer",
                    "format": "uint64",
                    "default": 5,
                    "minimum": 1,
                    "maximum": 50,
                    "description": "How many matches to list and load."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    );
    let refusal = |r: ToolResult| r.error.map(|e| (e.kind, e.message));
    assert_eq!(
        refusal(search(&view, "typed", json!({})).await),
        Some((
            ErrorKind::InvalidArguments,
            "Missing required parameter `query` of `tool_search`: expected a string.".to_owned()
        ))
    );
    assert_eq!(
        refusal(search(&view, "typed", json!({"query": "x", "max_result": 2})).await),
        Some((
            ErrorKind::InvalidArguments,
            "Unknown parameter `max_result` is not accepted by `tool_search`. Valid parameters: `query`, `max_results`.".to_owned()
        ))
    );
    assert_eq!(
        refusal(search(&view, "typed", json!({"query": 3})).await),
        Some((
            ErrorKind::InvalidArguments,
            "Invalid value for parameter `query` of `tool_search`: expected a string, but received an integer 3.".to_owned()
        ))
    );
    let r = search(
        &view,
        "typed",
        json!({"query": "select:read_file", "max_results": null}),
    )
    .await;
    assert!(r.error.is_none(), "{r:?}");
}

/// `open` (anywhere) and `shop` (only on `https://shop.example/*`).
fn scoped() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(tool("open", "Runs anywhere.", ToolKind::Read, &[], true))
        .unwrap();
    let mut spec = ToolSpec::new(
        "shop",
        "Runs on the shop's pages.",
        json!({"type": "object"}),
    );
    spec.url_patterns = vec!["https://shop.example/*".to_owned()];
    r.register(
        Tool::new(spec, |_args: Map<String, Value>, _ctx| async {
            ToolResult::ok("shop")
        })
        .unwrap(),
    )
    .unwrap();
    r
}

#[tokio::test]
async fn on_page_offers_what_execute_accepts_there() {
    let view = RegistryView::new(scoped());
    assert_eq!(names(&view.clone().on_page(None)), ["open"]);
    assert_eq!(
        names(&view.clone().on_page(Some("https://evil.example/"))),
        ["open"]
    );
    // A second call replaces the page of the first.
    let on_shop = view
        .clone()
        .on_page(None)
        .on_page(Some("https://shop.example/cart"));
    assert_eq!(names(&on_shop), ["open", "shop"]);

    // `execute` without a page: the refusal says how a page is given, and an
    // unknown tool's answer names only the tools offered here.
    let registry = scoped();
    let ctx = ToolContext::new();
    let refused = registry
        .execute("shop", json!({}), &ctx)
        .await
        .error
        .unwrap();
    assert_eq!(refused.kind, ErrorKind::Denied);
    assert_eq!(
        refused.message,
        "The tool `shop` runs only on the pages its URL patterns match, and this call has no page URL (the application gives it with `ToolContext::with_page_url`); use one of the tools offered here."
    );
    let unknown = registry
        .execute("zzz", json!({}), &ctx)
        .await
        .error
        .unwrap();
    assert_eq!(
        unknown.message,
        "Unknown tool `zzz`. Available tools: open."
    );
    let on_page = ToolContext::new().with_page_url("https://shop.example/a");
    let unknown = registry
        .execute("zzz", json!({}), &on_page)
        .await
        .error
        .unwrap();
    assert_eq!(
        unknown.message,
        "Unknown tool `zzz`. Available tools: open, shop."
    );
}

// ---- loaded sets in a shared state store (issue 32: replicas) ----

/// Two views over registries of their own (as two `tool serve` replicas
/// are), sharing one file store: the shared-store stand-in of unit tests.
fn shared_views(dir: &std::path::Path) -> (RegistryView, RegistryView) {
    let view = |store: std::sync::Arc<dyn tool_core::state::StateStore>| {
        deferred_view()
            .with_state_store(store, "/work/project")
            .unwrap()
    };
    let a = tool_core::state::FileStore::new(dir.join("state"));
    let b = tool_core::state::FileStore::new(dir.join("state"));
    (view(std::sync::Arc::new(a)), view(std::sync::Arc::new(b)))
}

#[tokio::test]
async fn a_load_through_one_view_is_listed_by_another_sharing_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = shared_views(dir.path());
    assert!(a.has_state_store() && !deferred_view().has_state_store());
    let r = search(&a, "t1", json!({"query": "select:slack__post_message"})).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.metadata["loaded"], json!(["slack__post_message"]));
    // The other view loads next, for the same trace: it appends.
    let r = search(
        &b,
        "t1",
        json!({"query": "select:github__create_issue,slack__post_message"}),
    )
    .await;
    assert_eq!(r.metadata["loaded"], json!(["github__create_issue"]));
    assert!(
        r.output.contains("- slack__post_message (already loaded)"),
        "{}",
        r.output
    );
    let expected = [
        "bash_command",
        "read_file",
        TOOL_SEARCH,
        "slack__post_message",
        "github__create_issue",
    ];
    for view in [&a, &b] {
        assert_eq!(
            view.loaded(Some("t1")),
            ["slack__post_message", "github__create_issue"]
        );
        let list = view.schemas_for(Format::Json, Some("t1")).unwrap();
        assert_eq!(rendered_names(&list), expected, "load order on both");
        assert!(
            view.loaded(Some("t2")).is_empty(),
            "another trace loads nothing"
        );
    }
    // Calls without a trace id stay in the view's memory.
    assert_eq!(
        a.load(None, &["github__list_issues"]),
        ["github__list_issues"]
    );
    assert_eq!(a.loaded(None), ["github__list_issues"]);
    assert!(b.loaded(None).is_empty());
    // The same trace id in another workspace starts empty.
    let elsewhere = deferred_view()
        .with_state_store(
            std::sync::Arc::new(tool_core::state::FileStore::new(dir.path().join("state"))),
            "/work/other",
        )
        .unwrap();
    assert!(elsewhere.loaded(Some("t1")).is_empty());
    assert!(
        deferred_view()
            .with_state_store(
                std::sync::Arc::new(tool_core::state::FileStore::new(dir.path().join("state"))),
                "relative"
            )
            .is_err()
    );
}

#[test]
fn concurrent_loads_through_two_views_lose_nothing() {
    let mut r = ToolRegistry::new();
    let names: Vec<String> = (0..40).map(|i| format!("tool_{i:02}")).collect();
    for n in &names {
        r.register(tool(n, "A tool.", ToolKind::Read, &[], true))
            .unwrap();
    }
    let live = LiveRegistry::new(r);
    let dir = tempfile::tempdir().unwrap();
    let view = || {
        let store = tool_core::state::FileStore::new(dir.path().join("state"));
        RegistryView::new(live.clone())
            .defer(["*"])
            .with_state_store(std::sync::Arc::new(store), "/work/project")
            .unwrap()
    };
    let (a, b) = (view(), view());
    std::thread::scope(|s| {
        for (view, parity) in [(&a, 0), (&b, 1)] {
            let names = &names;
            s.spawn(move || {
                for n in names.iter().skip(parity).step_by(2) {
                    assert_eq!(
                        view.try_load(Some("t"), &[n.as_str()]).unwrap(),
                        std::slice::from_ref(n)
                    );
                }
            });
        }
    });
    let loaded = a.try_loaded(Some("t")).unwrap();
    assert_eq!(loaded.len(), 40, "{loaded:?}");
    assert_eq!(b.loaded(Some("t")), loaded, "one order for both");
    for parity in [0, 1] {
        let mine: Vec<&String> = loaded
            .iter()
            .filter(|n| n[5..].parse::<usize>().unwrap() % 2 == parity)
            .collect();
        let expected: Vec<&String> = names.iter().skip(parity).step_by(2).collect();
        assert_eq!(mine, expected, "each view's loads in its order");
    }
}

/// A state store that is down.
#[derive(Debug)]
struct Down;

impl tool_core::state::StateStore for Down {
    fn get(
        &self,
        _: &tool_core::state::StateKey,
        _: &str,
    ) -> Result<Option<String>, tool_core::state::StateError> {
        Err(down())
    }
    fn put(
        &self,
        _: &tool_core::state::StateKey,
        _: &str,
        _: &str,
    ) -> Result<(), tool_core::state::StateError> {
        Err(down())
    }
    fn delete(
        &self,
        _: &tool_core::state::StateKey,
        _: &str,
    ) -> Result<(), tool_core::state::StateError> {
        Err(down())
    }
    fn compare_and_set(
        &self,
        _: &tool_core::state::StateKey,
        _: &str,
        _: Option<&str>,
        _: Option<&str>,
    ) -> Result<bool, tool_core::state::StateError> {
        Err(down())
    }
    fn entries(
        &self,
        _: &tool_core::state::StateKey,
    ) -> Result<Vec<(String, String)>, tool_core::state::StateError> {
        Err(down())
    }
    fn lifetime(&self) -> std::time::Duration {
        std::time::Duration::from_secs(60)
    }
    fn ping(&self) -> Result<(), tool_core::state::StateError> {
        Err(down())
    }
}

fn down() -> tool_core::state::StateError {
    tool_core::state::StateError::new(
        tool_core::state::StateErrorKind::Io,
        "the state server does not answer",
    )
}

#[tokio::test]
async fn a_load_the_store_refuses_is_an_error_not_a_memory_load() {
    let view = deferred_view()
        .with_state_store(std::sync::Arc::new(Down), "/work/project")
        .unwrap();
    let r = search(&view, "t1", json!({"query": "select:slack__post_message"})).await;
    let error = r.error.unwrap();
    assert_eq!(error.kind, ErrorKind::Failed);
    assert!(
        error
            .message
            .contains("could not load it: the state server does not answer"),
        "{}",
        error.message
    );
    assert!(view.try_loaded(Some("t1")).is_err());
    // The list falls back to a new session's.
    let list = view.schemas_for(Format::Json, Some("t1")).unwrap();
    assert_eq!(
        rendered_names(&list),
        ["bash_command", "read_file", TOOL_SEARCH]
    );
}
