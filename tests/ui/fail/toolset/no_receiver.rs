use tool_core::toolset;

struct Store;

#[toolset]
impl Store {
    /// Make a store.
    #[tool]
    fn create(name: String) -> String {
        name
    }
}

fn main() {}
