use tool_core::tool;

/// Search the notes.
///
/// Args:
///     query: Words to look for.
///     limt: Most notes returned.
#[tool]
fn search_notes(query: String, limit: usize) -> String {
    format!("{query} {limit}")
}

fn main() {}
