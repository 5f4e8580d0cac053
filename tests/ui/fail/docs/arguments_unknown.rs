use tool_core::tool;

/// Search the notes.
///
/// # Arguments
/// * `query` - Words to look for.
/// * `limit` - Most notes returned.
#[tool]
fn search_notes(terms: String, limit: usize) -> String {
    format!("{terms} {limit}")
}

fn main() {}
