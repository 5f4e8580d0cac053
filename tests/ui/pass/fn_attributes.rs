//! Attributes on the tool fn: a `#[cfg]` after `#[tool]` removes the
//! registration with the fn, and a deprecated tool fn causes no warning in
//! the generated code.
#![deny(warnings)]

use tool_core::{ToolRegistry, tool};

/// Never compiled in.
#[tool]
#[cfg(any())]
fn never(x: u8) -> u8 {
    x
}

/// An old tool.
#[tool]
#[deprecated = "use new_tool"]
fn old_tool() -> &'static str {
    "old"
}

/// A tool with the usual attributes.
#[tool(name = "inline_me")]
#[inline]
#[must_use]
fn with_attrs(/** The input. */ x: u8) -> u8 {
    x
}

fn main() {
    let registry = ToolRegistry::global();
    assert!(!registry.contains("never"));
    assert!(registry.contains("old_tool"));
    assert_eq!(with_attrs(1), 1);
    assert!(registry.contains("inline_me"));
}
