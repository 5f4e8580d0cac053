//! The evaluation set's tool definitions (`tests/data/tool_search/tools.json`),
//! replicated under numbered server names to reach any size, for the
//! `tool_search` and `context_saving` benchmarks.

use serde_json::{Map, Value};
use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};

/// `n` specs: the evaluation set's tools in file order, copy `k` named
/// `<server><k>__<tool>` (copy 0 keeps the original names).
pub(crate) fn specs(n: usize) -> Vec<ToolSpec> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tool_search/tools.json"
    );
    let text = std::fs::read_to_string(path).expect("tools.json");
    let defs: Vec<Value> = serde_json::from_str(&text).expect("tools.json parses");
    let mut out = Vec::with_capacity(n);
    for k in 0.. {
        for d in &defs {
            if out.len() == n {
                return out;
            }
            let name = d["name"].as_str().expect("name");
            let name = match (k, name.split_once("__")) {
                (0, _) => name.to_owned(),
                (_, Some((server, tool))) => format!("{server}{k}__{tool}"),
                (_, None) => format!("{name}_{k}"),
            };
            let tags: Vec<String> = d["tags"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            out.push(
                ToolSpec::new(
                    name,
                    d["description"].as_str().expect("description"),
                    d["parameters"].clone(),
                )
                .with_tags(tags),
            );
        }
    }
    out
}

/// A registry of `n` of [`specs`], each tool answering "ok".
pub(crate) fn registry(n: usize) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for spec in specs(n) {
        let tool = Tool::new(spec, |_: Map<String, Value>, _| async {
            ToolResult::ok("ok")
        })
        .expect("valid tool");
        registry.register(tool).expect("unique names");
    }
    registry
}
