//! The budget stage: output over the registry's [`Truncation`] keeps head and
//! tail, with the full (already masked) text spilled to a file.

use serde_json::Value;

use crate::result::ToolResult;
use crate::result::meta;
use crate::truncate::{self, Truncation};

/// Cuts the output to the registry's budget. A result that already names the
/// file holding its full output (`metadata["output_path"]`, e.g. from a tool
/// that truncated itself) keeps that path: the marker points there and no
/// second, partial spill file is written. New spill files go to the folder of
/// `trace_id`. The result is already masked (secret values are placeholders),
/// so spill files never hold a secret value.
pub(super) fn apply(result: &mut ToolResult, budget: &Truncation, trace_id: Option<&str>) {
    if truncate::fits(&result.output, budget)
        && result
            .error
            .as_ref()
            .is_none_or(|e| truncate::fits(&e.message, budget))
    {
        return;
    }
    let budget = &budget.clone().for_trace(trace_id);
    if let Some(error) = result.error.as_mut()
        && !truncate::fits(&error.message, budget)
    {
        let cut = truncate::truncate(&error.message, budget);
        error.message = cut.text;
        result
            .metadata
            .insert(meta::ERROR_TRUNCATED.to_owned(), Value::Bool(true));
    }
    if truncate::fits(&result.output, budget) {
        return;
    }
    let existing = result
        .metadata
        .get(meta::OUTPUT_PATH)
        .and_then(Value::as_str)
        .map(std::path::PathBuf::from);
    let cut = match existing {
        Some(path) => truncate::truncate_saved(&result.output, budget, &path),
        None => truncate::truncate(&result.output, budget),
    };
    if !cut.truncated {
        return;
    }
    result.output = cut.text;
    result
        .metadata
        .insert(meta::TRUNCATED.to_owned(), Value::Bool(true));
    if let Some(path) = cut.spill_path {
        result.metadata.insert(
            meta::OUTPUT_PATH.to_owned(),
            Value::String(path.display().to_string()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ErrorKind;
    use crate::tool::context::ToolContext;
    use serde_json::Map;

    /// The output budget's spill file holds the masked text, in the trace's folder.
    #[tokio::test]
    async fn output_budget_spill_is_masked_and_per_trace() {
        use crate::{SecretStore, Tool, ToolSpec};
        let parent =
            std::env::temp_dir().join(format!("tool-core-pipe-spill-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let spec = ToolSpec::new(
            "echo_lines",
            "Repeat a line.",
            serde_json::json!({"type": "object", "properties": {"line": {"type": "string"}, "error": {"type": "boolean"}}, "required": ["line"]}),
        );
        let tool = Tool::new(spec, |args: Map<String, Value>, _ctx| async move {
            let line = args["line"].as_str().unwrap_or_default().to_owned();
            // The value in the head, the omitted middle and the tail, raw and JSON-escaped.
            let text: String = (0..500)
                .map(|i| {
                    format!(
                        "{i} {line} {}\n",
                        serde_json::to_string(&line).unwrap_or_default()
                    )
                })
                .collect();
            if args.get("error").and_then(Value::as_bool) == Some(true) {
                ToolResult::error(ErrorKind::Failed, text)
            } else {
                ToolResult::ok(text)
            }
        })
        .unwrap();
        let mut registry = crate::ToolRegistry::new()
            .with_truncation(Some(Truncation::new().max_lines(40).spill_dir(&parent)));
        registry.register(tool).unwrap();
        let secrets = [
            ("api_key", "sk-live-0123456789"),
            ("quoted", "pa\"ss"),
            ("umlaut", "pässwörd"),
            ("spaced", "two words here"),
        ];
        let mut store = SecretStore::new();
        for (k, v) in secrets {
            store = store.with_secret(k, v).unwrap();
        }
        for (i, (key, value)) in secrets.iter().enumerate() {
            let trace = format!("pipe-{i}");
            let ctx = ToolContext::new()
                .with_trace_id(trace.clone())
                .with_secrets(store.clone());
            let args =
                serde_json::json!({"line": format!("<secret>{key}</secret>"), "error": i == 3});
            let res = registry.execute("echo_lines", args, &ctx).await;
            let shown = res.error.as_ref().map_or(&res.output, |e| &e.message);
            assert!(!shown.contains(value), "{shown}");
            let spill = if i == 3 {
                // An error message over the budget is cut too; its marker names the file.
                let marker = shown.lines().find(|l| l.contains("saved to ")).unwrap();
                let at = marker.find(&*parent.to_string_lossy()).unwrap();
                std::path::PathBuf::from(marker[at..].split(" (read").next().unwrap())
            } else {
                assert_eq!(res.metadata["truncated"], true);
                std::path::PathBuf::from(res.metadata["output_path"].as_str().unwrap())
            };
            assert_eq!(spill.parent().unwrap(), parent.join(&trace));
            let saved = std::fs::read_to_string(&spill).unwrap();
            assert_eq!(saved.lines().count(), 500);
            assert!(!saved.contains(value), "{value} in {}", spill.display());
            let placeholder = format!("<secret>{key}</secret>");
            assert_eq!(saved.matches(&placeholder).count(), 1000, "{saved:.200}");
        }
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
