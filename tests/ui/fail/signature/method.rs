use tool_core::tool;

struct Searcher;

impl Searcher {
    /// Search the web.
    #[tool]
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {
    let _ = Searcher.search("q".into());
}
