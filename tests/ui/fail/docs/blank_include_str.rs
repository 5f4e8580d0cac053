use tool_core::tool;

#[doc = include_str!("blank.md")]
#[tool]
fn search(query: String) -> String {
    query
}

fn main() {}
