use tool_core::tool;

/// Count the words of a text.
#[tool]
fn count_words(text: &str) -> usize {
    text.split_whitespace().count()
}

fn main() {}
