use tool_core::tool;

/// Compute the area (the fn name is not a valid tool name).
#[tool]
fn fläche(width: f64, height: f64) -> f64 {
    width * height
}

fn main() {}
