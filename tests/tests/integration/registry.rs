//! The global registry: listing, specs, lookups.

use tool_core::ToolRegistry;

#[test]
fn global_registry_lists_every_macro_tool_in_name_order() {
    let names = ToolRegistry::global().names();
    for expected in [
        "boom_async",
        "err_resize",
        "hidden_report",
        "inject_echo",
        "schema_find_places",
        "schema-rank_v2",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(ToolRegistry::try_global().is_ok());
    assert_eq!(ToolRegistry::from_inventory().unwrap().len(), names.len());
}

#[test]
fn suggestions_are_ranked() {
    let r = ToolRegistry::global();
    assert_eq!(r.suggest("sleepy").first(), Some(&"sleepy"));
    assert!(r.suggest("qqqqqqqqqq").is_empty());
}
