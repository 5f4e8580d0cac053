#![allow(deprecated)] use tool_core::tool;

pub struct Page {
    pub title: String,
}

/// Fetch a page.
#[tool]
fn fetch(url: String) -> Page {
    Page { title: url }
}

fn main() {
    let _ = fetch(String::new()).title;
}
