//! One tool must not stop a registry from rendering: each tool takes the
//! strictest form it can, falls back per tool (recorded in the rendering
//! report), and `OnRefusal::Refuse` keeps the old all-or-error behaviour.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::format::{
    Fallback, FallbackForm, Format, OnRefusal, Recursion, render_tool, render_tool_with_fallback,
};
use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec, tool};

/// A tree of numbers.
#[derive(Debug, Deserialize, JsonSchema)]
struct Tree {
    value: i32,
    #[serde(default)]
    children: Vec<Tree>,
}

/// Count words by name.
#[tool]
fn fb_counts(counts: HashMap<String, i32>) -> String {
    format!("{} counts", counts.len())
}

/// Read a file.
#[tool(read_only)]
fn fb_read(path: String, limit: Option<u32>) -> String {
    format!("{path} {limit:?}")
}

/// Sum a tree.
#[tool]
fn fb_tree(tree: Tree) -> String {
    format!("{} with {} children", tree.value, tree.children.len())
}

/// Tag things; asks for strict mode itself.
#[tool(strict)]
fn fb_tags(tags: HashMap<String, String>) -> String {
    format!("{} tags", tags.len())
}

fn registry(names: &[&str]) -> ToolRegistry {
    let all = ToolRegistry::from_inventory().expect("registers");
    let mut r = ToolRegistry::new();
    for name in names {
        r.register(all.get(name).expect("a test tool").clone())
            .expect("registers");
    }
    r
}

fn by_name<'a>(list: &'a Value, format: Format, name: &str) -> &'a Value {
    let items = match format {
        Format::Gemini { .. } | Format::GeminiJsonSchema => &list[0]["functionDeclarations"],
        _ => list,
    };
    items
        .as_array()
        .expect("a list")
        .iter()
        .find(|t| t["name"] == name || t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing from {list}"))
}

fn only(fallbacks: &[Fallback]) -> &Fallback {
    assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
    &fallbacks[0]
}

#[test]
fn openai_strict_falls_back_for_the_map_tool_only() {
    let r = registry(&["fb_counts", "fb_read"]);
    for format in [
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: true },
    ] {
        let list = r
            .schemas_in(format)
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        let strict_of = |name| {
            let t = by_name(&list, format, name);
            t.get("function").unwrap_or(t)["strict"].clone()
        };
        assert_eq!(strict_of("fb_counts"), json!(false), "{format}");
        assert_eq!(strict_of("fb_read"), json!(true), "{format}");
        let params = format.parameters_pointer();
        let counts = by_name(&list, format, "fb_counts");
        assert_eq!(
            counts.pointer(&format!("{params}/properties/counts/additionalProperties")),
            Some(&json!({"type": "integer", "format": "int32"})),
            "{format}: the plain schema keeps the map"
        );
        let read = by_name(&list, format, "fb_read");
        assert_eq!(
            read.pointer(&format!("{params}/required")),
            Some(&json!(["path", "limit"])),
            "{format}: the normal tool is still strict"
        );
        let f = only(list.fallbacks());
        assert_eq!(
            (f.tool.as_str(), f.format, f.form),
            ("fb_counts", format, FallbackForm::NonStrict)
        );
        assert_eq!(f.reason.rule.id, "openai.strict.additional-properties");
        assert_eq!(f.reason.path, "/properties/counts");
        let line = f.to_string();
        assert!(
            line.starts_with(&format!(
                "tool `fb_counts` rendered for {format} without strict mode: "
            )),
            "{line}"
        );
        assert!(
            line.contains("openai.strict.additional-properties"),
            "{line}"
        );
    }
}

#[test]
fn anthropic_strict_falls_back_for_maps_and_recursion() {
    let r = registry(&["fb_counts", "fb_read", "fb_tree"]);
    let format = Format::Anthropic { strict: true };
    let list = r.schemas_in(format).expect("every tool renders");
    assert_eq!(list.as_array().map(Vec::len), Some(3));
    assert_eq!(by_name(&list, format, "fb_read")["strict"], true);
    for name in ["fb_counts", "fb_tree"] {
        assert!(
            by_name(&list, format, name).get("strict").is_none(),
            "{name}"
        );
    }
    let rules: Vec<(&str, &str)> = list
        .fallbacks()
        .iter()
        .map(|f| (f.tool.as_str(), f.reason.rule.id))
        .collect();
    assert_eq!(
        rules,
        [
            ("fb_counts", "anthropic.strict.additional-properties"),
            ("fb_tree", "anthropic.strict.recursion")
        ]
    );
}

#[test]
fn a_tool_that_asks_for_strict_falls_back_too() {
    let r = registry(&["fb_tags", "fb_read"]);
    let format = Format::OpenAiChat { strict: false };
    let list = r.schemas_in(format).expect("renders");
    assert_eq!(
        by_name(&list, format, "fb_tags")["function"]["strict"],
        false
    );
    assert_eq!(
        by_name(&list, format, "fb_read")["function"]["strict"],
        false
    );
    assert_eq!(only(list.fallbacks()).tool, "fb_tags");
}

#[test]
fn gemini_uses_parameters_json_schema_for_maps_and_recursion() {
    let r = registry(&["fb_counts", "fb_read", "fb_tree"]);
    let format = Format::Gemini {
        recursion: Recursion::Refuse,
    };
    let list = r.schemas_in(format).expect("every tool renders");
    let read = by_name(&list, format, "fb_read");
    assert_eq!(read["parameters"]["properties"]["path"]["type"], "STRING");
    assert!(read.get("parametersJsonSchema").is_none());
    for name in ["fb_counts", "fb_tree"] {
        let decl = by_name(&list, format, name);
        assert!(decl.get("parameters").is_none(), "{name}");
        assert_eq!(decl["parametersJsonSchema"]["type"], "object", "{name}");
        // The same declaration Format::GeminiJsonSchema renders.
        let spec = r.get(name).expect("registered").spec();
        assert_eq!(
            decl,
            &render_tool(spec, Format::GeminiJsonSchema).expect("renders")
        );
    }
    let report: Vec<(&str, FallbackForm, &str)> = list
        .fallbacks()
        .iter()
        .map(|f| (f.tool.as_str(), f.form, f.reason.rule.id))
        .collect();
    assert_eq!(
        report,
        [
            (
                "fb_counts",
                FallbackForm::ParametersJsonSchema,
                "gemini.objects"
            ),
            (
                "fb_tree",
                FallbackForm::ParametersJsonSchema,
                "gemini.recursion"
            )
        ]
    );
    assert!(
        list.fallbacks()[1]
            .to_string()
            .contains("with parametersJsonSchema instead of parameters")
    );

    // Unrolling still writes the tree out in `parameters`; only the map falls back.
    let unrolled = Format::Gemini {
        recursion: Recursion::Unroll(2),
    };
    let list = r.schemas_in(unrolled).expect("renders");
    assert_eq!(
        by_name(&list, unrolled, "fb_tree")["parameters"]["type"],
        "OBJECT"
    );
    assert_eq!(only(list.fallbacks()).tool, "fb_counts");
}

#[test]
fn refusing_mode_errors_as_before() {
    let r = registry(&["fb_counts", "fb_read", "fb_tree"]);
    for (format, refused) in [
        (Format::OpenAiChat { strict: true }, vec!["fb_counts"]),
        (Format::OpenAiResponses { strict: true }, vec!["fb_counts"]),
        (
            Format::Anthropic { strict: true },
            vec!["fb_counts", "fb_tree"],
        ),
        (
            Format::Gemini {
                recursion: Recursion::Refuse,
            },
            vec!["fb_counts", "fb_tree"],
        ),
    ] {
        let e = r
            .schemas_with(format, OnRefusal::Refuse)
            .expect_err("refused");
        let names: Vec<&str> = e.errors().iter().map(|e| e.tool.as_str()).collect();
        assert_eq!(names, refused, "{format}");
        assert_eq!(
            e.errors()[0],
            render_tool(r.get("fb_counts").expect("registered").spec(), format)
                .expect_err("refused"),
            "{format}: the same error as rendering the tool alone"
        );
        assert!(e.partial().fallbacks().is_empty());
        let partial = e.partial().as_value().to_string();
        assert!(
            partial.contains("fb_read") && !partial.contains("fb_counts"),
            "{partial}"
        );
        // The default mode, asked right after, is cached separately and renders all.
        let all = r.schemas_in(format).expect("falls back");
        assert_eq!(all.fallbacks().len(), refused.len(), "{format}");
    }
}

#[test]
fn formats_without_a_looser_form_report_nothing() {
    let r = registry(&["fb_counts", "fb_read", "fb_tree"]);
    for format in [
        Format::Json,
        Format::OpenAiChat { strict: false },
        Format::Anthropic { strict: false },
        Format::GeminiJsonSchema,
        Format::Mcp,
    ] {
        let list = r
            .schemas_in(format)
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert!(list.fallbacks().is_empty(), "{format}");
    }
    assert!(r.check_formats(Format::ALL).is_empty());
}

#[test]
fn a_tool_the_looser_form_cannot_take_either_stays_an_error() {
    // Valid for OpenAI, but Gemini names start with a letter or underscore.
    let spec = ToolSpec::new(
        "9lives",
        "A tool.",
        json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": true}}}),
    );
    let tool = Tool::new(spec.clone(), |_, _| async { ToolResult::ok("") }).expect("valid tool");
    let mut r = registry(&["fb_read"]);
    r.register(tool).expect("registers");
    let gemini = Format::Gemini {
        recursion: Recursion::Refuse,
    };
    let e = r
        .schemas_in(gemini)
        .expect_err("the name is refused in both forms");
    assert_eq!(e.errors().len(), 1);
    assert_eq!(
        (e.errors()[0].tool.as_str(), e.errors()[0].rule.id),
        ("9lives", "gemini.name")
    );
    assert_eq!(
        e.errors()[0].format,
        gemini,
        "the error names the format asked for"
    );
    assert_eq!(
        e.partial()[0]["functionDeclarations"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(r.check_formats(&[gemini]).len(), 1);
    // One tool at a time: no fallback when the strictest form works, the error when none does.
    let (read, none) =
        render_tool_with_fallback(r.get("fb_read").expect("registered").spec(), gemini)
            .expect("renders");
    assert!(none.is_none() && read["parameters"].is_object());
    assert_eq!(
        render_tool_with_fallback(&spec, gemini)
            .expect_err("refused")
            .rule
            .id,
        "gemini.name"
    );
    let (t, fallback) =
        render_tool_with_fallback(&spec, Format::OpenAiChat { strict: true }).expect("falls back");
    assert_eq!(t["function"]["strict"], false);
    assert_eq!(fallback.map(|f| f.form), Some(FallbackForm::NonStrict));
}
