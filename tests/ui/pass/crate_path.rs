//! `crate = "..."` when tool_core is reachable under another name only.
//! `extern crate core as tool_core` makes `::tool_core` name libcore, so any
//! generated path that ignored the override would fail to resolve.
#![deny(warnings)]
#![allow(deprecated, reason = "parameters left undocumented on purpose: #[tool] warns of each")]

extern crate core as tool_core;
extern crate tool_core as my_tools;

use my_tools::{ToolContext, ToolRegistry};

/// Double a number.
#[my_tools::tool(crate = "my_tools")]
fn double(n: i64) -> String {
    (n * 2).to_string()
}

mod nested {
    /// A re-export of the runtime under a module path.
    pub mod runtime {
        pub use my_tools::*;
    }

    /// Triple a number.
    #[my_tools::tool(crate = "crate::nested::runtime", kind = "read")]
    pub async fn triple(n: i64) -> Result<i64, String> {
        Ok(n * 3)
    }
}

fn main() {
    let _ = tool_core::mem::size_of::<u8>();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let registry = ToolRegistry::global();
        let ctx = ToolContext::new();
        let r = registry.execute("double", serde_json::json!({"n": 21}), &ctx).await;
        assert_eq!(r.output, "42");
        let r = registry.execute("triple", serde_json::json!({"n": 2}), &ctx).await;
        assert_eq!(r.output, "6");
        assert_eq!(registry.get("triple").unwrap().spec().kind, my_tools::ToolKind::Read);
    });
}
