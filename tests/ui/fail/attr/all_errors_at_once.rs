// Every mistake of one item is reported in one compile, and the fn is still
// emitted: `main` calls it without an extra "cannot find function" error.
use tool_core::tool;

/// Search the web.
#[tool(kind = "fetch", hiden_params = ["uid"], timeout = "soon")]
fn search(query: String, #[arg(rename = "not valid")] uid: String) -> String {
    format!("{query} {uid}")
}

fn main() {
    let _ = search("q".into(), "u".into());
}
