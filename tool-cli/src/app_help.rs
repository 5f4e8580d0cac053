//! The help of an application's own program ([`Cli`](crate::Cli) over a
//! registry without the built-in tools): the usage lines, examples and
//! option texts of every command name the application's binary and show
//! calls of the application's own tools, never `tool` and the built-ins
//! (issue 24, second review, finding 1).
//!
//! The `tool` binary's help is the one in `cli.rs`; this module rewrites a
//! copy of that command for an application, so both stay one definition of
//! the options.

use serde_json::Value;
use tool_core::{ToolRegistry, ToolSpec};

/// One call of an application's tool, for its help's examples.
pub(crate) struct ExampleCall {
    /// The tool's name.
    tool: String,
    /// Its arguments as one JSON object (`{"sku": "example"}`; `{}` without parameters).
    json: String,
    /// The same arguments as `--key=value` pairs (`--sku=example`), or empty.
    pairs: String,
}

impl ExampleCall {
    /// A call of the registry's first tool (in name order) that can run
    /// anywhere and unasked: not URL-scoped, no confirmation, read-only
    /// preferred; each required parameter (else the first one) with a value
    /// of its type. `None` for an empty registry.
    pub(crate) fn pick(registry: &ToolRegistry) -> Option<Self> {
        let mut specs: Vec<&ToolSpec> = registry.specs().collect();
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        let plain = |s: &ToolSpec| s.url_patterns.is_empty() && !s.flags.requires_confirmation;
        let spec = *specs
            .iter()
            .find(|s| plain(s) && s.flags.read_only)
            .or_else(|| specs.iter().find(|s| plain(s)))
            .or_else(|| specs.first())?;
        let properties = spec.parameters["properties"].as_object();
        let required: Vec<&str> = spec.parameters["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut chosen: Vec<(&str, Value)> = properties
            .into_iter()
            .flatten()
            .filter(|(k, _)| required.contains(&k.as_str()))
            .map(|(k, schema)| (k.as_str(), sample(schema)))
            .collect();
        if chosen.is_empty()
            && let Some((k, schema)) = properties.and_then(|p| p.iter().next())
        {
            chosen.push((k.as_str(), sample(schema)));
        }
        let json = Value::Object(
            chosen
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
        .to_string()
        .replace("\":", "\": ")
        .replace(",\"", ", \"");
        let pairs = chosen
            .iter()
            .map(|(k, v)| {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                format!("--{}={text}", k.replace('_', "-"))
            })
            .collect::<Vec<_>>()
            .join(" ");
        Some(Self {
            tool: spec.name.clone(),
            json,
            pairs,
        })
    }
}

/// A value of the type `schema` describes, for an example: its first listed
/// value, else `"example"`, `1`, `1.5`, `true`, `[]` or `{}` by type.
fn sample(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::String(t) => t.as_str(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string"),
        _ => "string",
    };
    match kind {
        "integer" => Value::from(1),
        "number" => Value::from(1.5),
        "boolean" => Value::Bool(true),
        "array" => Value::Array(Vec::new()),
        "object" => Value::Object(serde_json::Map::new()),
        _ => Value::from("example"),
    }
}

/// `command` (the `tool` binary's definition, named `bin`) with every text
/// that names `tool` or a built-in rewritten for the application `bin`
/// whose tools are `registry`.
pub(crate) fn for_app(command: clap::Command, bin: &str, registry: &ToolRegistry) -> clap::Command {
    let example = ExampleCall::pick(registry).unwrap_or(ExampleCall {
        tool: "TOOL".to_owned(),
        json: "{}".to_owned(),
        pairs: String::new(),
    });
    let fill = |text: &str| {
        text.replace("{bin}", bin)
            .replace("{tool}", &example.tool)
            .replace("{json}", &example.json)
            .replace("{pairs}", &example.pairs)
    };
    command
        .about(format!(
            "List, describe and run {bin}'s tools from a shell, or serve them over MCP."
        ))
        .long_about(None)
        .after_help(fill(MAIN))
        .mut_arg("workspace", |a| {
            a.help("The run's workspace folder, in the context of every call [default: the current folder].")
        })
        .mut_arg("trace_id", |a| {
            a.help(
                "Trace id of this run [default: $TRACE_ID, else a generated cli-xxxxxxxx], in the \
                 context of every call (the `trace_id` value) and in the JSON result.",
            )
        })
        .mut_arg("out", |a| {
            a.help(
                "Folder for images and other files a tool returns [default: a folder per trace id \
                 under the system's temporary folder]: an existing folder, a path ending in / or \
                 one without an extension; or a path ending in .png, .jpg, .jpeg, .gif, .webp or \
                 .bmp, the file the first image is written to (the others beside it).",
            )
        })
        .mut_arg("keep_loaded", |a| {
            a.help(fill(
                "Keep the tools matching PATTERN loaded although a --defer pattern matches them \
                 (repeatable), e.g. `--defer '*' --keep-loaded {tool}`.",
            ))
        })
        .mut_arg("mcp_config", |a| {
            a.help(
                "MCP servers whose tools join this program's, named <server>__<tool>: a .mcp.json \
                 file, {\"mcpServers\": {NAME: {\"command\", \"args\", \"env\"} | {\"url\"}}}.",
            )
        })
        .mut_subcommand("list", |c| c.after_help(fill(LIST)))
        .mut_subcommand("schema", |c| c.after_help(fill(SCHEMA)))
        .mut_subcommand("call", |c| {
            c.override_usage(fill(
                "{bin} call [OPTIONS] <NAME> [ARGS_JSON | -] [--key=value ...]",
            ))
            .after_help(fill(CALL))
        })
        .mut_subcommand("batch", |c| c.after_help(fill(BATCH)))
        .mut_subcommand("parse", |c| {
            c.after_help(fill(PARSE)).mut_arg("tools", |a| {
                a.help(fill(
                    "A JSON array of tool schemas ({\"name\", \"description\", \"parameters\"}, as \
                     `{bin} schema` prints them) to check call names against and coerce argument \
                     types with.",
                ))
            })
        })
        .mut_subcommand("serve", |c| {
            c.after_help(fill(SERVE))
                .mut_arg("allow_remote", |a| {
                    a.help(
                        "Let clients on other machines in: --http may then be any address \
                         (0.0.0.0:PORT, [::]:PORT), every request needs \"Authorization: Bearer \
                         TOKEN\" (--token-file or --token), and the Host header is not checked. \
                         Anyone with the token can run every tool served.",
                    )
                })
                .mut_arg("token", |a| {
                    a.help(
                        "The bearer token itself. Other local users see it in the process list: \
                         prefer --token-file.",
                    )
                })
                .mut_arg("no_index", |a| a.hide(true))
        })
        // The built-ins' commands: refused for an application (see `refuse_builtin_options`).
        // Their help, if asked for (`{bin} index` alone prints it), names the
        // program and says when it refuses them.
        .mut_subcommand("skills", |c| c.hide(true).after_help(fill(SKILLS)))
        .mut_subcommand("index", |c| {
            c.hide(true)
                .about(fill(
                    "The search index `{bin} serve` keeps for the workspace: status, build now, drop.",
                ))
                .after_help(fill(INDEX))
        })
}

const SKILLS: &str = "\
`{bin} skills` lists the skills the built-in file tools load (`read_file`, the `skill` tool); {bin}
refuses it unless its registry includes them.

Example:
  {bin} --skills-dir ~/.agent/skills skills";

const INDEX: &str = "\
The index serves the built-in search tools (`grep_content`, `glob_files`); {bin} refuses `index`
unless its registry includes them.

Examples:
  {bin} --workspace ~/project index build    build or refresh the stored index now
  {bin} --workspace ~/project index status   what is stored, and where
  {bin} --workspace ~/project index drop     delete it

The index lives in the private state folder ($XDG_STATE_HOME/agent-tools/index/), keyed by the
workspace, never inside it. `{bin} serve` reuses a stored index whose files are unchanged.";

const MAIN: &str = "\
Examples:
  {bin} list
  {bin} schema {tool}
  {bin} call {tool} '{json}'
  {bin} serve

Exit status: 0 success, 1 the tool returned an error, 2 usage error.";

const LIST: &str = "\
Examples:
  {bin} list                      one line per tool: name, kind, summary
  {bin} list --json               every tool's full spec, a JSON array
  {bin} list --tokens             schema tokens per tool and format, and the total";

const SCHEMA: &str = "\
Examples:
  {bin} schema                    every tool's canonical schema (a JSON array)
  {bin} schema {tool}
  {bin} schema --format openai-strict {tool}
  {bin} schema --format mcp > tools.json

Formats: json (canonical), openai (= openai-chat), openai-strict
(= openai-chat-strict), openai-responses, openai-responses-strict, anthropic,
anthropic-strict, gemini, gemini-unroll-<levels>, gemini-json-schema, mcp,
anthropic-tool-search-bm25, anthropic-tool-search-regex. A tool that a
format's strict form cannot express is rendered in the looser form and
reported on stderr (with --no-fallback: left out).";

const CALL: &str = "\
Examples:
  {bin} call {tool} '{json}'
  {bin} call {tool} {pairs}
  echo '{json}' | {bin} call {tool} -
  {bin} call {tool} --help     the tool's description and parameters
  {bin} call --json {tool} {pairs}     one JSON object even on a terminal

Tool arguments: one JSON object right after NAME (or `-` to read it from
stdin), then any number of `--key=value` (or `--key value`) pairs; a pair
overrides the same key of the object. A value that parses as JSON is used as
that JSON (`--limit=5` is a number, `--x=true` a boolean), anything else is a
string; quote to force a string (`--query='\"true\"'`). A bare `--flag` is
`true`. Dashes in keys become underscores (`--from-year` is `from_year`);
a key no parameter has names the one parameter spelt the same but for case,
dashes and underscores (`--from-year` is also `fromYear`). The JSON object
takes exact names only.
Everything after NAME belongs to the tool: give this program's own options
before NAME.

Output: on a terminal, the result as readable text (title, output, error,
notes, files written; terminal control characters shown escaped); otherwise
(pipes, files, scripts) one JSON object: {\"trace_id\", \"tool\", \"title\",
\"output\", \"error\", \"notes\", \"metadata\", \"long_term_memory\", \"images\",
\"attachments\"}. --json and --text force one. Images and files a tool
returns are written under --out and reported by path.

Exit status: 0 success, 1 the tool returned an error, 2 usage error (unknown
tool, unparsable or invalid arguments).";

const BATCH: &str = "\
Examples:
  printf '%s\\n' '{\"name\": \"{tool}\", \"arguments\": {json}}' | {bin} batch

Input: one JSON object per line, {\"name\": TOOL, \"arguments\": {...}} (an
\"id\" member is echoed back). Output: one result object per input line, as
`{bin} call` prints it, written as soon as that call finishes. Every call
shares one context. The program ends at end of input, with status 0 unless
its input or output failed.";

const PARSE: &str = "\
Examples (stdin is a model's raw answer; stdout one JSON object):
  echo '<tool_call>{\"name\": \"{tool}\", \"arguments\": {json}}</tool_call>' | {bin} parse --format hermes
  {bin} schema --format json > tools.json; {bin} parse --format auto --tools tools.json < answer.txt

Formats: hermes, mistral, llama3_json, pythonic, deepseek_v3, qwen3_coder,
kimi_k2, granite, xlam, glm45, auto.";

const SERVE: &str = "\
Examples:
  {bin} serve                                    stdio, for an MCP client's config
  {bin} serve --http 127.0.0.1:8080              Streamable HTTP at http://127.0.0.1:8080/mcp
  {bin} serve --http 0.0.0.0:8080 --allow-remote --token-file token
                                                 any client that sends the token

Stdout carries protocol messages only. Tools that need confirmation ask the
client (elicitation) when it can be asked, else --approve decides. One line
on stderr says what is served. SIGTERM, SIGINT or SIGHUP stop the server:
running calls are cancelled and the program exits with status 0.";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_core::{Tool, ToolResult};

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        let spec = ToolSpec::new(
            "price",
            "Look up a price.",
            json!({"type": "object", "properties": {"sku": {"type": "string"},
                   "count": {"type": "integer"}}, "required": ["sku"]}),
        );
        let tool = Tool::new(spec, |_args, _ctx| async { ToolResult::ok("1") }).expect("valid");
        registry.register(tool).expect("registers");
        registry
    }

    #[test]
    fn the_example_call_uses_the_required_parameters() {
        let example = ExampleCall::pick(&registry()).expect("one tool");
        assert_eq!(example.tool, "price");
        assert_eq!(example.json, r#"{"sku": "example"}"#);
        assert_eq!(example.pairs, "--sku=example");
    }
}
