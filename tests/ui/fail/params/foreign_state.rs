// A look-alike `State` from another crate (axum's, say) is not taken for
// `tool_core::State`: it fails at the parameter, saying what to do.
use tool_core::tool;

mod axum {
    pub struct State<T>(pub T);
}

/// Count the visits.
#[tool]
fn visits(counter: axum::State<u64>) -> String {
    counter.0.to_string()
}

fn main() {}
