//! `#[arg(flatten)]` clashes the macro cannot see (a field of the struct
//! against another parameter or another struct's field), field names that
//! break the parameter-name rule, flattened types that are not structs and
//! tools with several spec problems: the registry refuses the tools when it
//! is built, naming the tool, the parameter and both owners, every problem
//! listed, and `# Arguments` entries naming no parameter nor field. Its own test binary,
//! since these tools make the global registry unbuildable.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]
#![allow(
    clippy::unwrap_used,
    reason = "a failed unwrap is a failed test, with its location"
)]

use std::sync::Arc;

use serde::Deserialize;
use tool_core::{RegistryError, ToolRegistry, tool, toolset};

/// A search.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
    /// Whose notes.
    pub uid: Option<String>,
}

/// Another search.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct MoreArgs {
    /// Also words to look for.
    #[serde(rename = "query")]
    pub words: String,
}

/// Not a struct.
#[derive(Deserialize, schemars::JsonSchema)]
pub enum Mode {
    /// Fast.
    Fast,
    /// Thorough.
    Thorough,
}

/// Field names no provider takes, set through serde.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct BadNames {
    /// A space.
    #[serde(rename = "has space")]
    pub s: String,
    /// Empty.
    #[serde(rename = "")]
    pub e: Option<u8>,
    /// A JSON Schema keyword's spelling.
    #[serde(rename = "$ref")]
    pub r: Option<u8>,
    /// Not ASCII.
    #[serde(rename = "ünï")]
    pub u: Option<u8>,
    /// Fine.
    pub fine: Option<u8>,
}

/// A newtype over an enum: its schema is the enum's.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct ModeBox(pub Mode);

/// Field names that break the parameter-name rule.
#[tool(strict)]
fn bad_names(#[arg(flatten)] b: BadNames) -> String {
    b.s
}

/// A renamed parameter against a field: both of its names are shown.
#[tool]
fn clash_renamed(
    #[arg(flatten)] args: SearchArgs,
    #[arg(rename = "query")] words: String,
) -> String {
    args.query + &words
}

/// A wrong editable name and a wrong display name: both reported.
#[tool(
    requires_confirmation,
    editable_params = ["nope"],
    display(en(params(gone = "Gone")))
)]
fn two_problems(#[arg(flatten)] args: SearchArgs) -> String {
    args.query
}

/// A newtype over an enum cannot be lifted either.
#[tool]
fn flat_mode_box(#[arg(flatten)] m: ModeBox) -> String {
    match m.0 {
        Mode::Fast => "fast".into(),
        Mode::Thorough => "thorough".into(),
    }
}

/// A field against an ordinary parameter.
#[tool]
fn clash_param(#[arg(flatten)] args: SearchArgs, query: String) -> String {
    args.query + &query
}

/// Two structs with one field name (through a serde rename).
#[tool]
fn clash_two(#[arg(flatten)] a: SearchArgs, #[arg(flatten)] b: MoreArgs) -> String {
    a.query + &b.words
}

/// A field against a hidden parameter (whose name the pipeline strips).
#[tool(hidden_params = ["uid"])]
fn clash_hidden(#[arg(flatten)] args: SearchArgs, uid: String) -> String {
    args.query + &uid
}

/// A misspelt field in the argument section (the macro cannot see the
/// fields; the registry checks the entry against them).
///
/// # Arguments
/// * `qurey` - Words to look for.
/// * `limit` - At most this many.
#[tool]
fn doc_typo(#[arg(flatten)] args: SearchArgs, limit: Option<u32>) -> String {
    format!("{} {limit:?}", args.query)
}

/// An enum cannot be lifted.
#[tool]
fn flat_enum(#[arg(flatten)] mode: Mode) -> String {
    match mode {
        Mode::Fast => "fast".into(),
        Mode::Thorough => "thorough".into(),
    }
}

/// Fine on its own.
#[tool]
fn flat_fine(#[arg(flatten)] args: SearchArgs, limit: Option<u32>) -> String {
    format!("{} {limit:?}", args.query)
}

struct Finder;

#[toolset]
impl Finder {
    /// A method with a clash.
    #[tool]
    fn clash_method(&self, #[arg(flatten)] args: MoreArgs, query: String) -> String {
        args.words + &query
    }
}

fn expected() -> Vec<String> {
    vec![
        "invalid tool `bad_names`: the fields \"has space\", \"\", \"$ref\", \"ünï\" of `BadNames` (the flattened parameter `b`) cannot be parameter names: parameter names must match ^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$ to be accepted by every provider; rename them with `#[serde(rename = \"...\")]`".to_owned(),
        "tool `clash_hidden` has two parameters named `uid`: the hidden parameter `uid` and a field of `SearchArgs` (the flattened parameter `args`); rename one (`#[serde(rename = \"...\")]` on a field, `#[arg(rename = \"...\")]` on a parameter)".to_owned(),
        "tool `clash_param` has two parameters named `query`: the parameter `query: String` and a field of `SearchArgs` (the flattened parameter `args`); rename one (`#[serde(rename = \"...\")]` on a field, `#[arg(rename = \"...\")]` on a parameter)".to_owned(),
        "tool `clash_renamed` has two parameters named `query`: the parameter `words: String` (sent as `query`) and a field of `SearchArgs` (the flattened parameter `args`); rename one (`#[serde(rename = \"...\")]` on a field, `#[arg(rename = \"...\")]` on a parameter)".to_owned(),
        "tool `clash_two` has two parameters named `query`: a field of `SearchArgs` (the flattened parameter `a`) and a field of `MoreArgs` (the flattened parameter `b`); rename one (`#[serde(rename = \"...\")]` on a field, `#[arg(rename = \"...\")]` on a parameter)".to_owned(),
        "invalid tool `doc_typo`: the doc comment's argument section describes `qurey`, which is no parameter or flattened field of the tool (did you mean `query`?)".to_owned(),
        "invalid tool `flat_enum`: the flattened parameter `mode: Mode` is not a struct with named fields: its schema is not `\"type\": \"object\"` (an enum, a tuple struct, a newtype of a scalar?); `#[arg(flatten)]` lifts a struct's fields to the tool's top-level parameters".to_owned(),
        // A newtype is followed to what it wraps, and the message says so.
        "invalid tool `flat_mode_box`: the flattened parameter `m: ModeBox` is not a struct with named fields (it wraps `Mode`, whose schema it takes): its schema is not `\"type\": \"object\"` (an enum, a tuple struct, a newtype of a scalar?); `#[arg(flatten)]` lifts a struct's fields to the tool's top-level parameters".to_owned(),
        // Two problems of one tool: both reported.
        "invalid tool `two_problems`: `display` names the parameter `gone`, which the tool does not have".to_owned(),
        "invalid tool `two_problems`: editable parameter `nope` is not a model-visible parameter".to_owned(),
    ]
}

fn messages(err: &RegistryError) -> Vec<String> {
    match err {
        RegistryError::Many(all) => all.iter().map(ToString::to_string).collect(),
        one => vec![one.to_string()],
    }
}

#[test]
fn every_builder_of_link_time_tools_refuses_them() {
    let err = ToolRegistry::from_inventory().unwrap_err();
    assert_eq!(messages(&err), expected());
    let RegistryError::Many(all) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        all[2],
        RegistryError::ParameterCollision {
            tool: "clash_param".into(),
            parameter: "query".into(),
            first: "the parameter `query: String`".into(),
            second: "a field of `SearchArgs` (the flattened parameter `args`)".into(),
        }
    );
    let this_crate = module_path!().split("::").next().unwrap();
    assert_eq!(
        messages(&ToolRegistry::of_crate(this_crate).unwrap_err()),
        expected()
    );
    assert_eq!(
        messages(ToolRegistry::try_global().unwrap_err()),
        expected()
    );
    let panic = std::panic::catch_unwind(|| ToolRegistry::global().len()).unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(
        text.contains("tool `clash_param` has two parameters named `query`"),
        "{text}"
    );
    // The fns stay ordinary fns.
    assert_eq!(
        flat_fine(
            SearchArgs {
                query: "a".into(),
                uid: None
            },
            Some(1)
        ),
        "a Some(1)"
    );
}

#[test]
fn a_toolset_with_a_clash_is_refused_when_added() {
    let mut registry = ToolRegistry::new();
    let err = registry.add_toolset(Arc::new(Finder)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `clash_method` has two parameters named `query`: the parameter `query: String` and a field of `MoreArgs` (the flattened parameter `args`); rename one (`#[serde(rename = \"...\")]` on a field, `#[arg(rename = \"...\")]` on a parameter)"
    );
    assert!(registry.is_empty());
}
