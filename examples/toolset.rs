//! Toolset: a small notes store whose methods are tools, held in `Arc<Self>`.
//!
//! `#[toolset]` on the impl block turns each `#[tool]` method into a tool
//! bound to one instance; `ToolRegistry::add_toolset` registers them all.
//! Run with `cargo run -p examples --example toolset`. Every printed value
//! is also asserted, so this example doubles as a test in CI.

use std::sync::{Arc, Mutex};

use tool_core::{ToolContext, ToolRegistry, toolset};

/// The notes, shared by every call.
#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<String>>,
}

#[toolset]
impl Notes {
    /// Add a note and return its number.
    ///
    /// # Arguments
    /// * `text` - The note's text.
    #[tool(kind = "write", tags = ["notes"])]
    fn add_note(&self, text: String) -> String {
        let mut notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        notes.push(text);
        format!("note {}", notes.len())
    }

    /// Find the notes containing `query`.
    ///
    /// # Arguments
    /// * `query` - Text to look for (case-sensitive).
    #[tool(kind = "read", read_only, tags = ["notes", "search"])]
    async fn find_notes(self: Arc<Self>, query: String) -> Vec<String> {
        let notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        notes
            .iter()
            .filter(|n| n.contains(&query))
            .cloned()
            .collect()
    }
}

#[tokio::main]
async fn main() {
    let notes = Arc::new(Notes::default());
    let mut registry = ToolRegistry::new();
    registry
        .add_toolset(Arc::clone(&notes))
        .expect("the toolset's names are free");
    println!("tools: {:?}", registry.names());
    assert_eq!(registry.names(), ["add_note", "find_notes"]);

    let ctx = ToolContext::new();
    for text in ["buy milk", "call Ann", "milk the cow"] {
        let out = registry
            .execute("add_note", serde_json::json!({ "text": text }), &ctx)
            .await;
        println!("add_note({text:?}) -> {}", out.output);
    }
    let found = registry
        .execute("find_notes", r#"{"query": "milk"}"#, &ctx)
        .await;
    println!("find_notes(\"milk\") -> {}", found.output);
    assert_eq!(found.output, r#"["buy milk","milk the cow"]"#);

    // The registry's tools share the instance the host holds.
    let held = notes.notes.lock().map(|n| n.len()).unwrap_or_default();
    println!("notes held by the host: {held}");
    assert_eq!(held, 3);
}
