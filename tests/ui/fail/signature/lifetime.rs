use tool_core::tool;

/// Echo a value.
#[tool]
fn echo<'a>(value: &'a str) -> &'a str {
    value
}

fn main() {}
