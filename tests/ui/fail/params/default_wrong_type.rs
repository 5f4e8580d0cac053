#![allow(deprecated)] use tool_core::tool;

/// Price of an item.
#[tool]
fn price(sku: String, #[arg(default = "ten")] limit: usize) -> String {
    format!("{sku} {limit}")
}

fn main() {}
