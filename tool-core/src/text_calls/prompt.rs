//! The prompt side: the tool list rendered into a system prompt in the
//! format's own shape, for servers that take no `tools` parameter (llama.cpp
//! without `--jinja`, raw Ollama templates, vLLM without a tool parser). The
//! shapes follow the models' chat templates: Hermes / Qwen list the tools
//! as JSON lines inside `<tools></tools>`; Llama 3.1 puts each function's
//! JSON in the prompt and asks for `{"name", "parameters"}`; Mistral wraps
//! the list in `[AVAILABLE_TOOLS]…[/AVAILABLE_TOOLS]`. The instructions are
//! our own words; each ends with an example of the markup the parser reads.

use serde::Serialize;
use serde_json::Value;

use super::types::ToolSchema;

/// `{"type": "function", "function": {…}}`, the OpenAI-style tool entry the
/// chat templates print.
#[derive(Serialize)]
struct Entry<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

fn entry_json(tool: &ToolSchema) -> String {
    let e = Entry {
        kind: "function",
        function: Function {
            name: &tool.name,
            description: &tool.description,
            parameters: &tool.parameters,
        },
    };
    serde_json::to_string(&e).unwrap_or_default()
}

fn lines(tools: &[ToolSchema]) -> String {
    tools.iter().map(entry_json).collect::<Vec<_>>().join("\n")
}

/// How a call is written in `format` (the example ending each prompt).
fn example(format: &str) -> &'static str {
    match format {
        "mistral" => "[TOOL_CALLS][{\"name\": \"<name>\", \"arguments\": {<arguments>}}]",
        "llama3_json" => "{\"name\": \"<name>\", \"parameters\": {<arguments>}}",
        "pythonic" => "[<name>(<argument>=<value>, ...), <other_name>()]",
        "deepseek_v3" => {
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜><name>\n```json\n{<arguments>}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        }
        "qwen3_coder" => {
            "<tool_call>\n<function=<name>>\n<parameter=<argument>>\n<value>\n</parameter>\n</function>\n</tool_call>"
        }
        "kimi_k2" => {
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.<name>:0<|tool_call_argument_begin|>{<arguments>}<|tool_call_end|><|tool_calls_section_end|>"
        }
        "granite" => "<|tool_call|>[{\"name\": \"<name>\", \"arguments\": {<arguments>}}]",
        "xlam" => "[{\"name\": \"<name>\", \"arguments\": {<arguments>}}]",
        "glm45" => {
            "<tool_call><name>\n<arg_key><argument></arg_key>\n<arg_value><value></arg_value>\n</tool_call>"
        }
        _ => "<tool_call>\n{\"name\": \"<name>\", \"arguments\": {<arguments>}}\n</tool_call>",
    }
}

/// The system-prompt text that offers `tools` to a model writing calls in
/// `format` (a name of [`FORMAT_NAMES`](super::FORMAT_NAMES); `auto` and
/// unknown names get the Hermes shape, the one most open-weight models were
/// trained on). Empty for an empty tool list.
///
/// ```
/// use serde_json::json;
/// use tool_core::text_calls::{ToolSchema, tool_prompt};
///
/// let tools = vec![ToolSchema { name: "now".into(), description: "The time.".into(), parameters: json!({}) }];
/// let p = tool_prompt("hermes", &tools);
/// assert!(p.contains("<tools>\n{\"type\":\"function\",\"function\":{\"name\":\"now\""));
/// assert!(p.contains("<tool_call>"));
/// ```
#[must_use]
pub fn tool_prompt(format: &str, tools: &[ToolSchema]) -> String {
    if tools.is_empty() {
        return String::new();
    }
    let how = example(format);
    match format {
        "mistral" => format!(
            "[AVAILABLE_TOOLS][{}][/AVAILABLE_TOOLS]\n\nTo use tools, answer with [TOOL_CALLS] followed by a JSON list of calls, each with the tool's name and its arguments as a JSON object:\n{how}",
            tools.iter().map(entry_json).collect::<Vec<_>>().join(",")
        ),
        "llama3_json" => format!(
            "You have access to the functions below. To call one, answer with a JSON object and nothing else, in the form\n{how}\nSeparate several calls with \"; \". Give literal argument values, not variables.\n\n{}",
            lines(tools)
        ),
        "pythonic" => format!(
            "You have access to the functions below. To call them, answer with a Python list of calls with keyword arguments and nothing else, such as\n{how}\n\n{}",
            lines(tools)
        ),
        "deepseek_v3" | "qwen3_coder" | "kimi_k2" | "granite" | "xlam" | "glm45" => format!(
            "# Tools\n\nYou have access to the functions described inside <tools></tools>:\n<tools>\n{}\n</tools>\n\nTo call a function, write exactly this markup, one call after another:\n{how}",
            lines(tools)
        ),
        _ => format!(
            "# Tools\n\nYou have access to the functions described inside <tools></tools>:\n<tools>\n{}\n</tools>\n\nTo call a function, write its name and its arguments as a JSON object between <tool_call></tool_call> tags, one block per call:\n{how}",
            lines(tools)
        ),
    }
}

/// A call rendered as the markup `format` writes (what the parser reads
/// back): for replaying an assistant turn's calls into the conversation of
/// a server that has no structured tool calls. `auto` and unknown names get
/// the Hermes shape. Values of XML-style formats (`qwen3_coder`, `glm45`)
/// are written as text (strings bare, anything else as JSON).
///
/// ```
/// use serde_json::json;
/// use tool_core::text_calls::{TextCall, render_call};
///
/// let Some(args) = json!({"path": "a.txt"}).as_object().cloned() else { unreachable!() };
/// let call = TextCall::new("read_file", args);
/// assert_eq!(render_call("hermes", &call), "<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.txt\"}}\n</tool_call>");
/// assert_eq!(render_call("pythonic", &call), "[read_file(path=\"a.txt\")]");
/// ```
#[must_use]
pub fn render_call(format: &str, call: &super::types::TextCall) -> String {
    let name = &call.name;
    let args = Value::Object(call.arguments.clone());
    let object = || {
        let mut m = serde_json::Map::new();
        m.insert("name".into(), Value::String(name.clone()));
        m.insert(
            if format == "llama3_json" {
                "parameters"
            } else {
                "arguments"
            }
            .into(),
            args.clone(),
        );
        Value::Object(m)
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match format {
        "mistral" => format!("[TOOL_CALLS][{}]", object()),
        "llama3_json" => object().to_string(),
        "granite" => format!("<|tool_call|>[{}]", object()),
        "xlam" => format!("[{}]", object()),
        "pythonic" => {
            // JSON literals are Python literals but for true / false / null.
            let py = |v: &Value| match v {
                Value::Bool(true) => "True".to_owned(),
                Value::Bool(false) => "False".to_owned(),
                Value::Null => "None".to_owned(),
                other => other.to_string(),
            };
            let kwargs: Vec<String> = call
                .arguments
                .iter()
                .map(|(k, v)| format!("{k}={}", py(v)))
                .collect();
            format!("[{name}({})]", kwargs.join(", "))
        }
        "deepseek_v3" => format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
        "kimi_k2" => format!(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"
        ),
        "qwen3_coder" => {
            let params: String = call
                .arguments
                .iter()
                .map(|(k, v)| format!("<parameter={k}>\n{}\n</parameter>\n", text(v)))
                .collect();
            format!("<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
        }
        "glm45" => {
            let params: String = call
                .arguments
                .iter()
                .map(|(k, v)| {
                    format!(
                        "<arg_key>{k}</arg_key>\n<arg_value>{}</arg_value>\n",
                        text(v)
                    )
                })
                .collect();
            format!("<tool_call>{name}\n{params}</tool_call>")
        }
        _ => format!("<tool_call>\n{}\n</tool_call>", object()),
    }
}
