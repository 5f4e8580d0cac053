//! Black-box tests of `registry` (moved from `lib.rs`).

use serde_json::json;

/// The tools as a host calls them: JSON arguments through the registry.
#[tokio::test]
async fn file_tools_through_the_registry() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("m.txt"), "a = 1\r\nb = 2\r\n").unwrap();
    let ctx = tool_builtins::context(d.path()).unwrap();
    let r = tool_builtins::registry();
    let edit = json!({"file_path": "m.txt", "old_string": "a = 1", "new_string": "a = 10"});
    let res = r.execute("edit_file", edit.clone(), &ctx).await;
    assert!(res.error.unwrap().message.starts_with("You must read file"));
    let res = r
        .execute(
            "read_file",
            json!({"file_path": "m.txt", "offset": null}),
            &ctx,
        )
        .await;
    assert!(res.output.contains("1: a = 1\n2: b = 2\n"), "{res:?}");
    let res = r.execute("edit_file", edit, &ctx).await;
    assert!(res.is_ok(), "{res:?}");
    let res = r
        .execute(
            "multi_edit",
            json!({"file_path": "m.txt", "edits": [
                {"old_string": "a = 10", "new_string": "a = 11"},
                {"old_string": "b = 2", "new_string": "b = 3", "replace_all": true}
            ]}),
            &ctx,
        )
        .await;
    assert!(res.is_ok(), "{res:?}");
    assert_eq!(
        std::fs::read(d.path().join("m.txt")).unwrap(),
        b"a = 11\r\nb = 3\r\n"
    );
    let res = r
        .execute(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch"}),
            &ctx,
        )
        .await;
    assert_eq!(
        res.output,
        "Success. Updated the following files:\nA n.txt\n"
    );
    let res = r
        .execute(
            "write_file",
            json!({"file_path": "n.txt", "content": "y"}),
            &ctx,
        )
        .await;
    assert!(res.is_ok(), "a patch write counts as a read: {res:?}");
}

fn private_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap()
}

/// Truncated output points at a spill file: `read_file` and `grep_content`
/// may read it (default and configured spill folders), nothing may write there.
#[tokio::test]
async fn spill_files_are_readable_but_not_writable() {
    let d = tempfile::tempdir().unwrap();
    // A spill parent must be private (mode 0700), as `tempfile` can make it.
    let custom = private_tempdir();
    let configured = tool_builtins::BashConfig::default().with_truncation(
        tool_builtins::BashConfig::default()
            .truncation
            .spill_dir(custom.path()),
    );
    let r = tool_builtins::registry();
    for ctx in [
        tool_builtins::context(d.path()).unwrap(),
        tool_builtins::context(d.path())
            .unwrap()
            .with_state(configured),
    ] {
        let res = r
            .execute("bash_command", json!({"command": "seq 1 100000"}), &ctx)
            .await;
        assert_eq!(res.metadata["truncated"], true, "{res:?}");
        let spill = res.metadata["output_path"].as_str().unwrap().to_owned();
        let res = r
            .execute(
                "read_file",
                json!({"file_path": spill, "offset": 77777, "limit": 1}),
                &ctx,
            )
            .await;
        assert!(res.output.contains("77777: 77777\n"), "{res:?}");
        let res = r
            .execute(
                "grep_content",
                json!({"pattern": "^88888$", "path": spill}),
                &ctx,
            )
            .await;
        assert!(res.output.starts_with("Found 1 matches"), "{res:?}");
        for (tool, args) in [
            ("write_file", json!({"file_path": spill, "content": "x"})),
            (
                "edit_file",
                json!({"file_path": spill, "old_string": "77777", "new_string": "x"}),
            ),
        ] {
            let res = r.execute(tool, args, &ctx).await;
            let msg = res.error.map(|e| e.message).unwrap_or_default();
            assert!(msg.contains("outside the workspace"), "{tool}: {msg}");
        }
        assert_eq!(std::fs::metadata(&spill).unwrap().len(), 588_895);
        std::fs::remove_file(spill).unwrap();
    }
}

/// `read_file` / `grep_content` accept the spill files of the calling
/// context's trace only: not another trace's, not through a planted
/// symlink, not without the same trace id.
#[tokio::test]
async fn a_workspace_holding_the_private_folder_cannot_reach_other_traces() {
    let r = tool_builtins::registry();
    let pid = std::process::id();
    let private = tool_core::truncate::private_dir().unwrap();
    let other = private.join("spill").join(format!("other-trace-{pid}"));
    tool_core::truncate::ensure_private_dir(&private.join("spill")).unwrap();
    tool_core::truncate::ensure_private_dir(&other).unwrap();
    let secret_file = other.join("output-x.txt");
    std::fs::write(&secret_file, "needle-of-another-trace\n").unwrap();
    // A workspace that contains the private folder: its parent.
    let top = std::fs::canonicalize(private.parent().unwrap()).unwrap();
    let ctx = tool_builtins::context(&top)
        .unwrap()
        .with_trace_id(format!("me-trace-{pid}"));
    let res = r
        .execute(
            "read_file",
            json!({"file_path": secret_file.display().to_string()}),
            &ctx,
        )
        .await;
    let e = res.error.expect("refused");
    assert_eq!(e.kind, tool_core::ErrorKind::Denied, "{}", e.message);
    assert!(e.message.contains("private folder"), "{}", e.message);
    for path in [private.display().to_string(), other.display().to_string()] {
        let res = r
            .execute(
                "grep_content",
                json!({"pattern": "needle-of-another", "path": path}),
                &ctx,
            )
            .await;
        assert!(!res.output.contains("output-x.txt"), "{res:?}");
    }
    let name = private.file_name().unwrap().to_string_lossy().into_owned();
    let listing = r
        .execute("list_dir", json!({"path": top.display().to_string()}), &ctx)
        .await;
    assert!(
        !listing.output.contains(&format!("{name}/spill")),
        "{}",
        listing.output
    );
    std::fs::remove_dir_all(&other).unwrap();
}

#[tokio::test]
async fn spill_files_of_another_trace_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let r = tool_builtins::registry();
    let pid = std::process::id();
    let ctx = |trace: &str| {
        tool_builtins::context(d.path())
            .unwrap()
            .with_trace_id(format!("{trace}-{pid}"))
    };
    let (a, b) = (ctx("spill-a"), ctx("spill-b"));
    assert!(
        tool_builtins::Workspace::new(d.path())
            .unwrap()
            .read_only_roots()
            .is_empty()
    );
    let res = r
        .execute("bash_command", json!({"command": "seq 1 100000"}), &a)
        .await;
    let spill = std::path::PathBuf::from(res.metadata["output_path"].as_str().unwrap());
    let a_dir = spill.parent().unwrap().to_path_buf();
    let parent = a_dir.parent().unwrap().to_path_buf();
    assert_eq!(a_dir, parent.join(format!("spill-a-{pid}")));
    let read = |path: String| json!({"file_path": path, "offset": 5, "limit": 1});
    let res = r
        .execute("read_file", read(spill.display().to_string()), &a)
        .await;
    assert!(res.output.contains("5: 5\n"), "{res:?}");
    // The same file through b's trace folder, a `..` path and plain.
    let b_dir = parent.join(format!("spill-b-{pid}"));
    tool_core::truncate::ensure_private_dir(&b_dir).unwrap();
    let name = spill.file_name().unwrap().to_string_lossy().into_owned();
    let via_dotdot = format!("{}/../spill-a-{pid}/{name}", b_dir.display());
    let planted_file = b_dir.join("planted.txt");
    std::os::unix::fs::symlink(&spill, &planted_file).unwrap();
    let c_dir = parent.join(format!("spill-c-{pid}"));
    std::os::unix::fs::symlink(&a_dir, &c_dir).unwrap();
    let via_planted_folder = c_dir.join(&name).display().to_string();
    let untraced = tool_builtins::context(d.path()).unwrap();
    for (who, ctx, path) in [
        ("b", &b, spill.display().to_string()),
        ("b", &b, via_dotdot),
        ("b", &b, planted_file.display().to_string()),
        ("c", &ctx("spill-c"), via_planted_folder),
        ("untraced", &untraced, spill.display().to_string()),
    ] {
        let res = r.execute("read_file", read(path.clone()), ctx).await;
        let msg = res.error.map(|e| e.message).unwrap_or_default();
        assert!(msg.contains("outside the workspace"), "{who} {path}: {msg}");
        let res = r
            .execute("grep_content", json!({"pattern": "^5$", "path": path}), ctx)
            .await;
        let msg = res.error.map(|e| e.message).unwrap_or_default();
        assert!(msg.contains("outside the workspace"), "{who} grep: {msg}");
    }
    for dir in [&a_dir, &b_dir] {
        std::fs::remove_dir_all(dir).unwrap();
    }
    std::fs::remove_file(&c_dir).unwrap();
}

#[test]
fn registry_holds_exactly_the_builtins_that_are_linked() {
    let r = tool_builtins::registry();
    for name in [
        "read_file",
        "write_file",
        "edit_file",
        "multi_edit",
        "apply_patch",
    ] {
        let tool = r.get(name).unwrap_or_else(|| panic!("{name} missing"));
        assert!(!tool.spec().description.is_empty());
        assert_eq!(tool.spec().hidden_params, vec!["context".to_owned()]);
    }
    // Found by crate, not by a list: exactly the built-ins, no test tool.
    assert_eq!(
        r.names(),
        [
            "apply_patch",
            "ask_user",
            "bash_command",
            "edit_file",
            "glob_files",
            "goal",
            "grep_content",
            "job_kill",
            "job_list",
            "job_output",
            "list_dir",
            "multi_edit",
            "read_file",
            "read_images",
            "todo_read",
            "todo_write",
            "web_fetch",
            "web_search",
            "write_file",
        ]
    );
    for (name, tags) in [
        ("read_file", &["fs", "read"][..]),
        ("edit_file", &["fs", "edit"]),
        ("grep_content", &["fs", "search"]),
        ("bash_command", &["shell"]),
    ] {
        assert_eq!(r.get(name).unwrap().spec().tags, tags, "{name}");
    }
    // A shell can delete anything and reach the network: say so to MCP clients.
    let bash = r.get("bash_command").unwrap().spec();
    assert!(bash.flags.destructive && bash.flags.open_world && !bash.flags.read_only);
    let read = r.get("read_file").unwrap().spec();
    assert_eq!(read.parameters["properties"]["offset"]["default"], 1);
    let edit = r.get("edit_file").unwrap().spec();
    assert_eq!(
        edit.parameters["properties"]["replace_all"]["type"],
        "boolean"
    );
    let mut names = read.parameter_names();
    names.sort_unstable();
    assert_eq!(names, vec!["file_path", "limit", "offset"]);
    assert_eq!(
        read.parameters["required"],
        serde_json::json!(["file_path"])
    );
}

/// Linking this crate does not hand its tools to an application: the
/// built-ins are an opt-in library, out of `global()` (issue 24), and
/// `registry()` / `of_crate` still find every one of them.
#[test]
fn builtins_stay_out_of_the_global_registry() {
    let global = tool_core::ToolRegistry::global();
    let builtins = tool_builtins::registry();
    assert!(builtins.contains("bash_command"));
    assert!(builtins.contains("write_file"));
    assert!(builtins.len() >= 10, "{:?}", builtins.names());
    for name in builtins.names() {
        assert!(!global.contains(name), "`{name}` is in global()");
    }
    let by_crate = tool_core::ToolRegistry::of_crate("tool_builtins").unwrap();
    assert_eq!(by_crate.names(), builtins.names());
}

/// Every built-in with parameters ships 1 to 3 input examples (its doc
/// comment's `# Examples`), and each one passes the tool's own argument
/// check as a model's call would; the Anthropic rendering carries them, the
/// strict one and the other formats do not.
#[test]
fn every_builtin_ships_input_examples_that_its_schema_accepts() {
    let registry = tool_builtins::registry();
    let mut counted = 0;
    for spec in registry.specs() {
        let takes_arguments = spec.parameters["properties"]
            .as_object()
            .is_some_and(|p| !p.is_empty());
        if !takes_arguments {
            assert!(spec.input_examples.is_empty(), "{}", spec.name);
            continue;
        }
        assert!(
            (1..=3).contains(&spec.input_examples.len()),
            "{} has {} examples",
            spec.name,
            spec.input_examples.len()
        );
        for example in &spec.input_examples {
            let mut problems = Vec::new();
            conforms(
                &spec.parameters,
                &spec.parameters,
                example,
                "",
                &mut problems,
            );
            assert!(
                problems.is_empty(),
                "{}: {example} fails its schema: {problems:?}",
                spec.name
            );
            counted += 1;
        }
    }
    assert!(counted >= 20, "{counted}");
    let anthropic = registry
        .schemas_in(tool_core::Format::Anthropic { strict: false })
        .unwrap();
    let strict = registry
        .schemas_in(tool_core::Format::Anthropic { strict: true })
        .unwrap();
    let openai = registry
        .schemas_in(tool_core::Format::OpenAiChat { strict: false })
        .unwrap();
    let has = |v: &serde_json::Value| v.to_string().contains("input_examples");
    assert!(has(anthropic.as_value()));
    assert!(!has(strict.as_value()));
    assert!(!has(openai.as_value()));
}

/// A small JSON Schema check for the examples test: `type` (one or a list),
/// `properties` / `required` / `additionalProperties: false`, `items`,
/// local `$ref`, `oneOf`, `anyOf`, `const` and `enum` — the keywords the
/// built-ins' schemas use.
fn conforms(
    root: &serde_json::Value,
    schema: &serde_json::Value,
    value: &serde_json::Value,
    at: &str,
    problems: &mut Vec<String>,
) {
    use serde_json::Value;
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(r.trim_start_matches('#')).unwrap();
        return conforms(root, target, value, at, problems);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let fits = options.iter().any(|o| {
                let mut p = Vec::new();
                conforms(root, o, value, at, &mut p);
                p.is_empty()
            });
            if !fits {
                problems.push(format!("{at}: no {key} branch fits {value}"));
            }
            return;
        }
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            problems.push(format!("{at}: {value} is not {c}"));
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(value) {
            problems.push(format!("{at}: {value} not in {e:?}"));
        }
    }
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let allowed: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let fits = allowed.is_empty()
        || allowed.contains(&kind)
        || (kind == "integer" && allowed.contains(&"number"));
    if !fits {
        problems.push(format!("{at}: {kind} where {allowed:?} is expected"));
        return;
    }
    if let (Some(props), Value::Object(map)) = (schema.get("properties"), value) {
        for (k, v) in map {
            match props.get(k) {
                Some(p) => conforms(root, p, v, &format!("{at}/{k}"), problems),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    problems.push(format!("{at}: unknown property {k}"));
                }
                None => {}
            }
        }
        for r in schema["required"].as_array().into_iter().flatten() {
            if !map.contains_key(r.as_str().unwrap()) {
                problems.push(format!("{at}: missing {r}"));
            }
        }
    }
    if let (Some(items), Value::Array(list)) = (schema.get("items"), value) {
        for (i, v) in list.iter().enumerate() {
            conforms(root, items, v, &format!("{at}/{i}"), problems);
        }
    }
}
