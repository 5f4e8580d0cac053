use tool_core::tool;

/// Add two numbers.
#[tool]
fn add((a, b): (u8, u8)) -> u8 {
    a + b
}

fn main() {}
