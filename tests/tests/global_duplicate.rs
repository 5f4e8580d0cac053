//! Two `#[tool]` fns with one name: the global registry refuses to build and names both sites.

mod first {
    /// First definition.
    #[tool_core::tool(name = "dup_tool")]
    pub(super) fn one() -> String {
        "one".into()
    }
}

mod second {
    /// Second definition.
    #[tool_core::tool(name = "dup_tool")]
    pub(super) fn two() -> String {
        "two".into()
    }
}

#[test]
fn duplicate_names_fail_with_both_sites() {
    let err = tool_core::ToolRegistry::try_global().unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("duplicate tool name `dup_tool`: defined at "),
        "{text}"
    );
    assert!(text.contains("global_duplicate.rs:6"), "{text}");
    assert!(text.contains("global_duplicate.rs:14"), "{text}");
    let panic = std::panic::catch_unwind(|| tool_core::ToolRegistry::global().len()).unwrap_err();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(msg.contains("dup_tool"), "{msg}");
    // The functions stay ordinary functions.
    assert_eq!(first::one(), "one");
    assert_eq!(second::two(), "two");
}
