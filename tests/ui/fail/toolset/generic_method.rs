use tool_core::toolset;

struct Store;

#[toolset]
impl Store {
    /// Save a value.
    #[tool]
    fn save<T: ToString>(&self, value: String) -> String {
        value
    }
}

fn main() {}
