#![allow(deprecated)] use tool_core::tool;

#[derive(Debug)]
pub struct FetchError;

/// Fetch a page.
#[tool]
fn fetch(url: String) -> Result<String, FetchError> {
    if url.is_empty() { Err(FetchError) } else { Ok(url) }
}

fn main() {}
