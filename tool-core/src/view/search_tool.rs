//! The `tool_search` tool of a view with deferred tools: its spec, and one
//! search (a `select:` list or BM25-ranked text) that loads the matches for
//! the session. Apart from `view/mod.rs`, which holds the view itself.

use super::*;

/// The arguments of `tool_search`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What the tool should do, in a few words; or `select:` followed by comma-separated tool names.
    query: String,
    /// How many matches to list and load.
    #[serde(default = "default_max_results")]
    #[schemars(range(min = 1, max = MAX_RESULTS_LIMIT))]
    max_results: u64,
}

/// `max_results` when not sent: [`DEFAULT_MAX_RESULTS`].
fn default_max_results() -> u64 {
    DEFAULT_MAX_RESULTS as u64
}

/// The `tool_search` tool of a view: holds the view weakly (the view's
/// registry holds the tool).
pub(super) fn search_tool(view: Weak<Inner>) -> Tool {
    let spec = ToolSpec::new(TOOL_SEARCH, "", Value::Null)
        .with_description(
            "Find tools that are available but not loaded yet, and load them so you can call them. \
             Search with a few words saying what you want to do (\"create a pull request\", \
             \"send a chat message\"), or load tools by exact name with `select:name_a,name_b`. \
             Loaded tools can be called from your next step on.",
        )
        .read_only()
        .with_kind(ToolKind::Read);
    let handler = move |args: SearchArgs, ctx: ToolContext| {
        let view = view.upgrade().map(|inner| RegistryView { inner });
        async move {
            match view {
                // A shared store is a network or file round trip: off the runtime's threads.
                Some(view) if view.has_state_store() => {
                    crate::result::into_result::run_blocking(move || run_search(&view, &args, &ctx))
                        .await
                        .unwrap_or_else(|e| ToolResult::error(e.kind, e.message))
                }
                Some(view) => run_search(&view, &args, &ctx),
                None => ToolResult::error(
                    ErrorKind::Failed,
                    "The tool list this search belongs to is gone.",
                ),
            }
        }
    };
    match Tool::typed(spec, handler) {
        Ok(t) => t,
        // The spec above and `SearchArgs` are fixed and valid; `Tool::typed` only checks them.
        Err(e) => unreachable!("the tool_search spec is invalid: {e}"),
    }
}

/// One `tool_search` call.
fn run_search(view: &RegistryView, args: &SearchArgs, ctx: &ToolContext) -> ToolResult {
    let query = args.query.as_str();
    if query.trim().is_empty() {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            "The `query` of `tool_search` is empty: give a few words saying what the tool should do, or `select:name_a,name_b`.",
        );
    }
    if query.len() > MAX_QUERY_LEN {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "The query is {} bytes long; at most {MAX_QUERY_LEN} are accepted. Search with a few words.",
                query.len()
            ),
        );
    }
    // The schema says 1 to MAX_RESULTS_LIMIT; serde checks only the type.
    let Ok(max_results @ 1..=MAX_RESULTS_LIMIT) = usize::try_from(args.max_results) else {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "Invalid value for parameter `max_results` of `tool_search`: expected an integer from 1 to {MAX_RESULTS_LIMIT}, but received {}.",
                args.max_results
            ),
        );
    };
    let m = view.current();
    let session = ctx
        .state::<SearchSession>()
        .map(|s| s.0.0.clone())
        .or_else(|| ctx.trace_id().map(str::to_owned));
    let inline = ctx.state::<InlineSchemas>().map(|s| s.0.0);
    let mut weak = false;
    let (matches, unknown): (Vec<String>, Vec<String>) = match Query::parse(query) {
        Query::Select(names) => {
            if names.is_empty() {
                return ToolResult::error(
                    ErrorKind::InvalidArguments,
                    "`select:` needs tool names after it, separated by commas: `select:name_a,name_b`.",
                );
            }
            let names: Vec<String> = names.into_iter().filter(|n| n != TOOL_SEARCH).collect();
            if names.is_empty() {
                return ToolResult::ok(format!(
                    "`{TOOL_SEARCH}` is this tool itself: it is always loaded. Select other tools by name, or search with a few words."
                ));
            }
            names.into_iter().partition(|n| m.registry.contains(n))
        }
        Query::Text(text) => {
            let hits = view.search_in(&m, &text, max_results);
            weak = hits.first().is_some_and(|h| h.weak);
            (hits.into_iter().map(|h| h.name).collect(), Vec::new())
        }
    };
    if matches.is_empty() {
        return no_match(&m, query, &unknown);
    }
    let refs: Vec<&str> = matches.iter().map(String::as_str).collect();
    let newly = if inline.is_some() {
        Vec::new()
    } else {
        match view.try_load(session.as_deref(), &refs) {
            Ok(newly) => newly,
            Err(e) => {
                return ToolResult::error(
                    ErrorKind::Failed,
                    format!(
                        "Found {}, but could not load {}: {e}. Try again in a moment.",
                        matches.join(", "),
                        if matches.len() == 1 { "it" } else { "them" }
                    ),
                );
            }
        }
    };
    let mut text = if weak {
        format!(
            "No tool matches the words of `{}` well; the {} closest (weak matches, check them or search again with other words):\n",
            crate::args::messages::quote(query),
            matches.len()
        )
    } else {
        format!(
            "{} tool{} found:\n",
            matches.len(),
            if matches.len() == 1 { "" } else { "s" }
        )
    };
    for name in &matches {
        let summary = m
            .registry
            .get(name)
            .map(|t| first_line(&t.spec().description))
            .unwrap_or_default();
        let state = if !m.deferred.contains(name) {
            "already loaded"
        } else if inline.is_some() {
            "definition below"
        } else if newly.contains(name) {
            "loaded now"
        } else {
            "already loaded"
        };
        text.push_str(&format!("- {name} ({state}): {summary}\n"));
    }
    for name in &unknown {
        text.push_str(&format!("- {name}: no such tool{}\n", suggestion(&m, name)));
    }
    let mut result = match inline {
        Some(format) => {
            let defs: Vec<Value> = matches
                .iter()
                .filter_map(|n| m.registry.get(n))
                .filter_map(|t| {
                    render_tool_with_fallback(t.spec(), format)
                        .ok()
                        .map(|(v, _)| v)
                })
                .collect();
            text.push_str("Their definitions (call them by name):\n");
            text.push_str(&serde_json::to_string(&defs).unwrap_or_default());
            ToolResult::ok(text)
        }
        None => {
            if newly.is_empty() {
                text.push_str("Nothing new was loaded; the tools above can be called now.");
            } else {
                text.push_str("The loaded tools can be called from your next step on.");
            }
            ToolResult::ok(text)
        }
    };
    result.metadata.insert("matches".to_owned(), json!(matches));
    result.metadata.insert("loaded".to_owned(), json!(newly));
    result.metadata.insert("weak".to_owned(), json!(weak));
    result
}

/// The answer to a query that found nothing: says so and suggests `select:`
/// with the closest names.
fn no_match(m: &Materialized, query: &str, unknown: &[String]) -> ToolResult {
    let target = if unknown.is_empty() {
        query.to_owned()
    } else {
        unknown.join(" ")
    };
    let closest = closest_names(m, &target, 3);
    let mut message = if unknown.is_empty() {
        format!("No tool matches `{}`.", crate::args::messages::quote(query))
    } else {
        format!(
            "No tool is called {}.",
            unknown
                .iter()
                .map(|n| format!("`{}`", crate::args::messages::quote(n)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if closest.is_empty() {
        message.push_str(" Try other words.");
    } else {
        message.push_str(&format!(
            " The closest names: {}. Load one with `select:{}`, or try other words.",
            closest.join(", "),
            closest.join(",")
        ));
    }
    let mut result = ToolResult::ok(message);
    result.metadata.insert("matches".to_owned(), json!([]));
    result.metadata.insert("loaded".to_owned(), json!([]));
    result
}

fn suggestion(m: &Materialized, name: &str) -> String {
    let closest = closest_names(m, name, 3);
    if closest.is_empty() {
        String::new()
    } else {
        format!(" (closest: {})", closest.join(", "))
    }
}

/// The at most `limit` tool names closest to `text`, best first, through
/// `tool_rules::suggest::ranked` (Jaro-Winkler ≥ 0.75, the project's one
/// did-you-mean, cross-cutting §1; spaces read as `_`); `tool_search` left out.
fn closest_names(m: &Materialized, text: &str, limit: usize) -> Vec<String> {
    let target = text.trim().replace(' ', "_");
    let names = m.registry.names();
    tool_rules::suggest::ranked(
        &target,
        names.iter().copied().filter(|n| *n != TOOL_SEARCH),
        limit,
    )
    .into_iter()
    .map(str::to_owned)
    .collect()
}

/// The first non-empty line of a description, cut to 200 characters.
fn first_line(description: &str) -> String {
    let line = description
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    match line.char_indices().nth(200) {
        None => line.to_owned(),
        Some((at, _)) => format!("{}…", &line[..at]),
    }
}
