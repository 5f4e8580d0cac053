use tool_core::toolset;

struct Notes;

#[toolset]
impl Notes {
    /// Add a note.
    #[tool(name = "note")]
    fn add(&self, text: String) -> String {
        text
    }

    /// Show a note.
    #[tool(name = "note")]
    fn show(&self, id: u32) -> String {
        id.to_string()
    }
}

fn main() {}
