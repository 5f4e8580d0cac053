//! What a new user meets in the first hour (issue 24): `Display` for
//! `ToolArgs`, `Recursion` next to `Format`, a default kept in the
//! description when strict mode drops it, and a bound-aware message for a
//! negative number sent to an unsigned parameter.

use serde_json::json;
use tool_core::{Format, Recursion, ToolArgs, ToolContext, ToolRegistry, tool};

/// Search the notes.
///
/// # Arguments
/// * `query` - Words to look for.
/// * `limit` - Most notes returned.
#[tool]
fn fh_search(query: String, #[arg(default = 10)] limit: usize) -> String {
    format!("{query}: {limit}")
}

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory().expect("the test tools register")
}

#[test]
fn tool_args_display_shows_what_arrived() {
    let parsed = ToolArgs::from(json!({"path": "a.txt", "n": 2}));
    assert_eq!(parsed.to_string(), r#"{"path":"a.txt","n":2}"#);
    let raw = ToolArgs::from("{\"path\": broken");
    assert_eq!(raw.to_string(), "{\"path\": broken");
}

#[test]
fn recursion_is_exported_next_to_format() {
    let format = Format::Gemini {
        recursion: Recursion::Unroll(2),
    };
    assert!(matches!(
        format,
        Format::Gemini {
            recursion: Recursion::Unroll(2)
        }
    ));
    assert_eq!(Recursion::default(), Recursion::Refuse);
}

#[test]
fn strict_mode_keeps_a_dropped_default_in_the_description() {
    let r = registry();
    for format in [
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: true },
        Format::Anthropic { strict: true },
    ] {
        let rendered = tool_core::format::render_tool(r.get("fh_search").unwrap().spec(), format)
            .expect("renders");
        let text = rendered.to_string();
        assert!(!text.contains("\"default\""), "{format:?}: {text}");
        assert!(
            text.contains("Most notes returned. Default: 10."),
            "{format:?}: {text}"
        );
    }
    // Where the default survives, the description is left alone.
    let plain = tool_core::format::render_tool(
        r.get("fh_search").unwrap().spec(),
        Format::OpenAiChat { strict: false },
    )
    .expect("renders")
    .to_string();
    assert!(plain.contains("\"default\":10"), "{plain}");
    assert!(!plain.contains("Default: 10"), "{plain}");
}

#[tokio::test]
async fn a_negative_number_for_an_unsigned_parameter_names_the_bound() {
    let r = registry();
    let result = r
        .execute(
            "fh_search",
            json!({"query": "x", "limit": -3}),
            &ToolContext::new(),
        )
        .await;
    let message = result.error.expect("an error").message;
    assert_eq!(
        message,
        "Invalid value for parameter `limit` of `fh_search`: expected an integer of at least 0, \
         but received an integer -3."
    );
    // An integer too large for a `usize` (second review, finding 7).
    let result = r
        .execute(
            "fh_search",
            serde_json::from_str::<serde_json::Value>(
                r#"{"query": "x", "limit": 18446744073709551616}"#,
            )
            .expect("JSON"),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(
        result.error.expect("an error").message,
        "Invalid value for parameter `limit` of `fh_search`: expected an integer of at most \
         18446744073709551615, but received an integer 18446744073709551616."
    );
    // A value of the wrong kind still says the kind.
    let result = r
        .execute(
            "fh_search",
            json!({"query": "x", "limit": "many"}),
            &ToolContext::new(),
        )
        .await;
    let message = result.error.expect("an error").message;
    assert!(
        message.contains("expected an integer, but received a string \"many\""),
        "{message}"
    );
}

/// Greet someone (second review, finding 5: a string literal defaults a text parameter).
///
/// # Arguments
/// * `name` - Who to greet.
/// * `dir` - Where they live.
#[tool]
fn fh_greet(
    #[arg(default = "reader")] name: String,
    #[arg(default = "/srv")] dir: std::path::PathBuf,
) -> String {
    format!("hi {name} in {}", dir.display())
}

#[tokio::test]
async fn a_string_literal_defaults_a_text_parameter() {
    let registry = registry();
    let spec = registry.get("fh_greet").expect("registered").spec();
    assert_eq!(spec.parameters["properties"]["name"]["default"], "reader");
    assert_eq!(spec.parameters["properties"]["dir"]["default"], "/srv");
    let result = registry
        .execute("fh_greet", json!({}), &ToolContext::new())
        .await;
    assert_eq!(result.output, "hi reader in /srv");
    let result = registry
        .execute("fh_greet", json!({"name": "ana"}), &ToolContext::new())
        .await;
    assert_eq!(result.output, "hi ana in /srv");
}

#[test]
fn of_crate_without_tools_is_an_error_naming_the_crates_with_tools() {
    // This test's crate is `first_hour`; a misspelt name gets the did-you-mean.
    assert!(
        ToolRegistry::of_crate("first_hour")
            .expect("this crate has tools")
            .contains("fh_search")
    );
    let message = ToolRegistry::of_crate("first_hours")
        .expect_err("no tools under that name")
        .to_string();
    assert!(
        message.starts_with(
            "no `#[tool]` fn of the crate `first_hours` is linked into this program; did you mean `first_hour`? (crates with tools: first_hour)"
        ),
        "{message}"
    );
    // The `use` example names the crate suggested, not the misspelling.
    assert!(message.contains("e.g. `use first_hour as _;`"), "{message}");
    // A package named after its library plus a suffix (`first_hour_app`):
    // the library's name is suggested.
    let message = ToolRegistry::of_crate("first-hour-app")
        .expect_err("no tools under that name")
        .to_string();
    assert!(message.contains("the crate `first_hour_app`"), "{message}");
    assert!(message.contains("did you mean `first_hour`?"), "{message}");
    assert!(message.contains("e.g. `use first_hour as _;`"), "{message}");
    // Nothing close: no suggestion, the `use` example names what was asked.
    let message = ToolRegistry::of_crate("inventory")
        .expect_err("no tools under that name")
        .to_string();
    assert!(!message.contains("did you mean"), "{message}");
    assert!(message.contains("e.g. `use inventory as _;`"), "{message}");
}
