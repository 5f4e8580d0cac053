#![allow(deprecated)] use tool_core::tool;

#[derive(schemars::JsonSchema)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// Distance from the origin.
#[tool]
fn norm(label: String, point: Point) -> String {
    format!("{label}: {}", (point.x * point.x + point.y * point.y).sqrt())
}

fn main() {}
