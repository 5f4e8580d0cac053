use tool_core::tool;

/// Search the web.
#[tool(name = "search_the_whole_world_wide_web_for_pages_that_match_the_query_xy")]
fn search(query: String) -> String {
    query
}

fn main() {}
