use tool_core::tool;

///
///
#[tool]
fn search(query: String) -> String {
    query
}

fn main() {}
