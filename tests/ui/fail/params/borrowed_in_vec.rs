use tool_core::tool;

/// Join words.
#[tool]
fn join(words: Vec<&'static str>) -> String {
    words.join(" ")
}

fn main() {}
