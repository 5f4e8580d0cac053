//! `#[toolset]`: `&self` and `self: Arc<Self>`, sync and async, options,
//! extractors and defaults on methods of a generic impl block.
#![deny(warnings)]

use std::sync::{Arc, Mutex};

use tool_core::{ToolContext, ToolKind, ToolRegistry, Toolset, toolset};

trait Store: Send + Sync + 'static {
    fn put(&self, text: String) -> usize;
    fn all(&self) -> Vec<String>;
}

#[derive(Default)]
struct Memory(Mutex<Vec<String>>);

impl Store for Memory {
    fn put(&self, text: String) -> usize {
        let mut notes = self.0.lock().unwrap();
        notes.push(text);
        notes.len()
    }
    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

struct Notes<S> {
    store: S,
    prefix: &'static str,
}

#[toolset]
impl<S: Store> Notes<S> {
    /// Add a note.
    ///
    /// # Arguments
    /// * `text` - The note.
    #[tool(kind = "write", tags = ["notes"], name = "add_note")]
    fn add(&self, text: String) -> String {
        format!("{}{}", self.prefix, self.store.put(text))
    }

    /// List the notes.
    #[tool(read_only, kind = "read")]
    async fn list_notes(
        self: Arc<Self>,
        /// At most this many.
        #[arg(default = 10)]
        limit: usize,
        ctx: &ToolContext,
    ) -> Vec<String> {
        let mut all = self.store.all();
        all.truncate(limit);
        all.push(ctx.uid().unwrap_or("nobody").to_owned());
        all
    }

    /// Not a tool: an ordinary method stays as it is.
    fn count(&self) -> usize {
        self.store.all().len()
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let notes = Arc::new(Notes { store: Memory::default(), prefix: "#" });
    let tools = Arc::clone(&notes).tools().unwrap();
    assert_eq!(tools.len(), 2);
    let mut registry = ToolRegistry::new();
    registry.add_toolset(Arc::clone(&notes)).unwrap();
    assert_eq!(registry.names(), ["add_note", "list_notes"]);
    let add = registry.get("add_note").unwrap().spec();
    assert_eq!((add.kind, add.tags.as_slice()), (ToolKind::Write, &["notes".to_owned()][..]));
    assert_eq!(add.parameters["properties"]["text"]["description"], "The note.");
    assert!(registry.get("list_notes").unwrap().spec().flags.read_only);
    // Not in the global registry: a method's tool needs an instance.
    assert!(!ToolRegistry::global().contains("add_note"));

    let ctx = ToolContext::new().with_uid("ann");
    let out = rt.block_on(registry.execute("add_note", r#"{"text": "milk"}"#, &ctx));
    assert_eq!(out.output, "#1");
    let out = rt.block_on(registry.execute("list_notes", "{}", &ctx));
    assert_eq!(out.output, r#"["milk","ann"]"#);
    assert_eq!(notes.count(), 1);
    // A second instance collides by name, as any two tools do.
    let again = Arc::new(Notes { store: Memory::default(), prefix: "" });
    assert!(registry.add_toolset(again).is_err());
}
