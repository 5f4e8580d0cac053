//! [`ToolSpec`]: everything known about a tool except how to run it.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_rules::ToolFlags;

/// What a tool does to the world, for approval policies.
///
/// The default is [`Other`](Self::Other), the most conservative: a policy that
/// auto-approves reads never auto-approves a tool whose kind it does not know.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads local state only (files, indexes).
    Read,
    /// Changes local state (writes or deletes files, saves records).
    Write,
    /// Runs programs or code.
    Exec,
    /// Talks to other machines.
    Network,
    /// Asks the user something.
    Ask,
    /// Anything else, or unknown.
    #[default]
    Other,
}

impl ToolKind {
    /// The `snake_case` name used in the attribute (`kind = "read"`) and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Exec => "exec",
            Self::Network => "network",
            Self::Ask => "ask",
            Self::Other => "other",
        }
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a call of the tool may run as a *task*: work that outlives the
/// call that started it, which the caller polls for its result (the MCP tasks
/// extension, SEP-2663; the values are MCP's `taskSupport`). A task is a job
/// of the one job registry ([`jobs`](crate::jobs)), so its bounds hold.
///
/// Set with `#[tool(task_support = "optional")]` or
/// [`ToolSpec::with_task_support`]; default [`Forbidden`](Self::Forbidden).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Every call runs to its end inside the call (the default).
    #[default]
    Forbidden,
    /// A caller that can poll gets a task; any other caller waits for the
    /// result inside the call.
    Optional,
    /// Only a caller that can poll may call it; any other caller is refused
    /// (MCP: `-32021`, the tasks extension missing).
    Required,
}

impl TaskSupport {
    /// The `snake_case` name used in the attribute and in JSON
    /// (`forbidden`, `optional`, `required`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }

    /// `true` for [`Forbidden`](Self::Forbidden) (serde's `skip_serializing_if`).
    #[allow(
        clippy::trivially_copy_pass_by_ref,
        reason = "serde's skip_serializing_if passes a reference"
    )]
    pub fn is_forbidden(&self) -> bool {
        *self == Self::Forbidden
    }
}

impl fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A localised display name of a tool and of its parameters, for UIs and confirmation prompts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisplayName {
    /// The tool's name in this language, if given.
    pub name: Option<String>,
    /// Parameter name (model-facing) → its name in this language.
    pub params: BTreeMap<String, String>,
}

/// Where a tool was defined, for duplicate-name errors (`file:line`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLocation {
    /// Source file as `file!()` gives it (relative to the crate's workspace root).
    pub file: String,
    /// 1-based line of the `#[tool]` fn.
    pub line: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The description of a tool: name, description, JSON Schema of its
/// model-visible parameters, and the policy options of `#[tool(...)]`.
///
/// `#[tool]` fills every field; tools defined at run time start from
/// [`ToolSpec::new`] and the `with_*` setters. Only `timeout` has run-time
/// behaviour in the core pipeline today; the other policy fields are carried
/// for the governance layer and the provider formats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// Tool name, matching `^[a-zA-Z0-9_-]{1,64}$` (the OpenAI and Anthropic rule).
    pub name: String,
    /// What the tool does and when to use it; never empty.
    pub description: String,
    /// JSON Schema (2020-12) of the arguments object: root `type: object`.
    pub parameters: Value,
    /// Effect class for approval policies. Default [`ToolKind::Other`].
    pub kind: ToolKind,
    /// Free-form labels (`"fs"`, `"git"`) for selecting tools
    /// ([`RegistryView::tags`](crate::RegistryView::tags)) and for tool
    /// search; in the order given, duplicates removed. Default empty.
    /// `#[tool(tags = [...])]` and `Tool::new` check each against
    /// `tool_rules::names::TAG_RULE`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The boolean options (read-only, destructive, idempotent, open world,
    /// concurrency-safe, requires confirmation, strict), all `false` by
    /// default; in JSON each is a field of the spec itself.
    #[serde(flatten)]
    pub flags: ToolFlags,
    /// Parameters a person may edit while approving (model-facing names).
    pub editable_params: Vec<String>,
    /// Page URL patterns the tool is limited to; empty means everywhere.
    pub url_patterns: Vec<String>,
    /// Parameters never shown to the model (Rust names), filled by the framework.
    pub hidden_params: Vec<String>,
    /// Language tag (`"en"`, `"zh"`) → display names.
    pub display: BTreeMap<String, DisplayName>,
    /// Per-tool timeout; `None` falls back to the context's, then the registry's (120 s).
    #[serde(with = "opt_millis")]
    pub timeout: Option<Duration>,
    /// Example argument objects (from a `# Examples` doc section).
    pub input_examples: Vec<Value>,
    /// JSON Schema of the structured result (an object), for tools that
    /// return a `Serialize + JsonSchema` type; sent as MCP `outputSchema`.
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// Where the tool was defined (`#[tool]` tools only).
    pub source: Option<SourceLocation>,
    /// Whether a call may run as a task ([`TaskSupport`]); default
    /// `forbidden`, and then absent from the JSON.
    #[serde(default, skip_serializing_if = "TaskSupport::is_forbidden")]
    pub task_support: TaskSupport,
}

impl ToolSpec {
    /// A spec with the given name, description and parameters schema and every
    /// option at its default. Validation happens in [`Tool::new`](crate::Tool::new).
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            kind: ToolKind::Other,
            tags: Vec::new(),
            flags: ToolFlags::NONE,
            editable_params: Vec::new(),
            url_patterns: Vec::new(),
            hidden_params: Vec::new(),
            display: BTreeMap::new(),
            timeout: None,
            input_examples: Vec::new(),
            output_schema: None,
            source: None,
            task_support: TaskSupport::Forbidden,
        }
    }

    /// Sets the description (the text the model reads), for a tool whose
    /// description is built at run time, e.g. from what is installed.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the kind.
    #[must_use]
    pub fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// Adds tags (see [`tags`](Self::tags)); a tag already present is not added again.
    #[must_use]
    pub fn with_tags(mut self, tags: impl IntoIterator<Item = impl Into<String>>) -> Self {
        for tag in tags {
            let tag = tag.into();
            if !self.tags.contains(&tag) {
                self.tags.push(tag);
            }
        }
        self
    }

    /// Sets the boolean options at once.
    #[must_use]
    pub fn with_flags(mut self, flags: ToolFlags) -> Self {
        self.flags = flags;
        self
    }

    /// Sets the per-tool timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets whether a call may run as a task (see [`TaskSupport`]).
    #[must_use]
    pub fn with_task_support(mut self, task_support: TaskSupport) -> Self {
        self.task_support = task_support;
        self
    }

    /// Marks the tool read-only.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.flags.read_only = true;
        self
    }

    /// Marks the tool as requiring confirmation, with the parameters a person may edit.
    #[must_use]
    pub fn requires_confirmation(mut self, editable_params: &[&str]) -> Self {
        self.flags.requires_confirmation = true;
        self.editable_params = editable_params.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// The canonical schema object of this tool: `{"name", "description", "parameters"}`.
    pub fn canonical_schema(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        })
    }

    /// Names of the model-visible parameters (the schema's root `properties`), in schema order.
    pub fn parameter_names(&self) -> Vec<&str> {
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The first line-paragraph of the description.
    pub fn summary(&self) -> &str {
        let text = self.description.trim();
        text.split("\n\n").next().unwrap_or(text).trim()
    }
}

mod opt_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(
        clippy::ref_option,
        reason = "serde's `with` passes a reference to the field"
    )]
    pub(super) fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_some(&u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

/// The portable tool-name rule: `^[a-zA-Z0-9_-]{1,64}$`.
///
/// Source: OpenAI function names and Anthropic tool names both require it;
/// it is the strictest of the providers this crate targets. The macro checks
/// the same rule at compile time (both use `tool_rules::names`).
pub fn is_valid_tool_name(name: &str) -> bool {
    tool_rules::names::is_valid_tool_name(name)
}
