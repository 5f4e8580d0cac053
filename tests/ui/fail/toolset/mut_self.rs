use tool_core::toolset;

struct Counter(u64);

#[toolset]
impl Counter {
    /// Add one.
    #[tool]
    fn bump(&mut self) -> String {
        self.0 += 1;
        self.0.to_string()
    }
}

fn main() {}
