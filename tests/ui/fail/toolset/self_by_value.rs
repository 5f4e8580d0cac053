use tool_core::toolset;

struct Counter(u64);

#[toolset]
impl Counter {
    /// Read the count.
    #[tool]
    fn read(self) -> String {
        self.0.to_string()
    }
}

fn main() {}
