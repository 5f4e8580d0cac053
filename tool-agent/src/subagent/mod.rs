//! Sub-agents: the `agent` tool (delegate one task, or explore several in
//! parallel) and the `evaluate` tool (a read-only judge of a goal's result).
//!
//! Both are built from one [`SubAgents`] value: the model client, the
//! parent's tools (without `agent` and `evaluate`), the presets, the skills
//! and the [`TraceStore`]. Each sub-agent runs on its own [`RegistryView`]
//! of the parent's tools (the mode's and the preset's rules added to the
//! parent's view) under its own sub-trace id
//! `{parent}@{mode}-{seq}-{timestamp}-001` ([`sub_trace_id`]), and its
//! conversation is stored so a later call can `continue_from` it.
//!
//! | `task` | mode | runs | tools |
//! | --- | --- | --- | --- |
//! | a string | `delegate` | one sub-agent | the parent's, minus `agent` and `evaluate` |
//! | a list of strings | `explore` | one per task, in parallel | read-only ones only |
//!
//! The parent's [`ToolContext`] is the hidden context: sub-agents run with
//! it (workspace, approver, values), their own trace id in place of the
//! parent's. For `evaluate`, the host gives the goal, never the model: a goal
//! registered with [`SubAgents::goal`], a goal of the trace's goal tree
//! (tool-builtins' `goal` tool, with this crate's `builtins` feature: its
//! description and criteria), or the context values `goals`
//! (`{"<id>": "<description>"}`) and `goal` (the current goal's description,
//! a string or `{"description"}`); `target_goal_id` picks one, defaulting to
//! the context's `goal_id`. An `agent` call may name the goal its
//! sub-agents work on (`goal_id`), and `evaluate` of a tree goal does too:
//! the goal is marked `type: agent_call` with the mode and the sub-trace
//! ids (tool-builtins' `goal::mark_agent_call`).
//!
//! ```
//! use std::sync::Arc;
//! use tool_agent::subagent::SubAgents;
//! use tool_agent::{ScriptedClient, ScriptedTurn};
//! use tool_core::{ToolContext, ToolRegistry};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedClient::new([ScriptedTurn::text("found 3 TODOs")]);
//! let subagents = Arc::new(SubAgents::new(model, ToolRegistry::new()));
//! let mut tools = ToolRegistry::new();
//! tools.register(subagents.clone().agent_tool()?)?;
//!
//! let ctx = ToolContext::new().with_trace_id("run-7");
//! let result = tools.execute("agent", serde_json::json!({"task": "count the TODOs"}), &ctx).await;
//! let summary: serde_json::Value = serde_json::from_str(&result.output)?;
//! assert_eq!(summary["mode"], "delegate");
//! assert_eq!(summary["results"][0]["text"], "found 3 TODOs");
//! assert!(summary["results"][0]["trace_id"].as_str().unwrap().starts_with("run-7@delegate-1-"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Why one file of this size: it is one concern, the two sub-agent tools and the
//! runs they start (argument checks, modes, summaries); presets and the trace
//! store are their own files (`presets.rs`, `trace.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
#[cfg(doc)]
use tool_core::ToolRegistry;
use tool_core::{RegistryError, RegistryView, Tool, ToolContext, ToolResult, ToolSpec, meta};

use crate::agent::{Agent, RunOutput};
use crate::client::ModelClient;
use crate::limits::AgentLimits;
use crate::message::Message;

mod background;
mod goals;
mod presets;
mod trace;

pub use presets::{Preset, Presets, SkillSource};
pub use trace::{StoredTrace, TraceStore, sub_trace_id};

/// Most tasks of one `explore` call.
pub const MAX_TASKS: usize = 16;
/// Most messages given with one task.
pub const MAX_MESSAGES: usize = 200;
/// Longest task or message text, in bytes.
pub const MAX_TEXT: usize = 200_000;
/// Most skills of one call.
pub const MAX_SKILLS: usize = 32;

const DELEGATE_PROMPT: &str = "You are a sub-agent working on one task for another agent. Use the tools to do the task, then answer with a short report of what you did and found; the other agent sees only that report.";
const EXPLORE_PROMPT: &str = "You are one of several sub-agents exploring a question in parallel for another agent. Your tools can only read. Investigate your task, then answer with a short report of what you found; the other agent sees only that report.";
const EVALUATE_PROMPT: &str = "You judge whether the result of a goal meets the goal's description. Your tools can only read; use them to check claims. Answer with one JSON object and nothing else: {\"verdict\": \"pass\" or \"fail\", \"reason\": \"<one paragraph>\", \"suggestions\": [\"<what to change>\", ...]}.";

/// The sub-agent machinery behind the `agent` and `evaluate` tools (see the
/// [module docs](self)).
pub struct SubAgents {
    client: Arc<dyn ModelClient>,
    tools: RegistryView,
    presets: Presets,
    store: Arc<TraceStore>,
    skills: Option<Arc<dyn SkillSource>>,
    goals: BTreeMap<String, String>,
    limits: AgentLimits,
}

impl std::fmt::Debug for SubAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgents")
            .field("model", &self.client.model())
            .field("tools", &self.tools.names())
            .field("presets", &self.presets.names())
            .finish_non_exhaustive()
    }
}

impl SubAgents {
    /// Sub-agents of `client` over `tools` (the parent's view or registry;
    /// `agent` and `evaluate` are left out of every sub-agent's view), an
    /// in-memory trace store, no presets or skills, 16 turns each.
    pub fn new(client: impl ModelClient + 'static, tools: impl Into<RegistryView>) -> Self {
        Self::with_shared_client(Arc::new(client), tools)
    }

    /// [`new`](Self::new) with a shared client.
    pub fn with_shared_client(
        client: Arc<dyn ModelClient>,
        tools: impl Into<RegistryView>,
    ) -> Self {
        Self {
            client,
            tools: tools.into(),
            presets: Presets::new(),
            store: Arc::new(TraceStore::in_memory()),
            skills: None,
            goals: BTreeMap::new(),
            limits: AgentLimits {
                max_turns: 16,
                ..AgentLimits::default()
            },
        }
    }

    /// The presets `agent_type` names.
    pub fn presets(mut self, presets: Presets) -> Self {
        self.presets = presets;
        self
    }

    /// The trace store (e.g. [`TraceStore::with_dir`]).
    pub fn store(mut self, store: Arc<TraceStore>) -> Self {
        self.store = store;
        self
    }

    /// Where skill texts come from.
    pub fn skills(mut self, source: impl SkillSource + 'static) -> Self {
        self.skills = Some(Arc::new(source));
        self
    }

    /// Registers goal `id` with its description, for `evaluate`.
    pub fn goal(mut self, id: impl Into<String>, description: impl Into<String>) -> Self {
        self.goals.insert(id.into(), description.into());
        self
    }

    // The limits of each sub-agent (default 16 turns): `limits`,
    // `max_turns`, `time_limit`, `max_output_tokens`, `first_tool_choice`.
    crate::limits::limit_setters!();

    /// The trace store.
    pub fn trace_store(&self) -> &Arc<TraceStore> {
        &self.store
    }

    /// The `agent` tool: [`AgentArgs`] decoded by the framework's typed
    /// path ([`Tool::typed`]), then [`SubAgents::agent`].
    ///
    /// # Errors
    /// None in practice: the spec is fixed ([`Tool::typed`] checks it).
    pub fn agent_tool(self: Arc<Self>) -> Result<Tool, RegistryError> {
        let mut spec = ToolSpec::new("agent", AGENT_DESCRIPTION, Value::Null)
            .with_timeout(Duration::from_secs(3600));
        spec.input_examples = agent_examples();
        let this = self;
        Tool::typed(spec, move |args: AgentArgs, ctx: ToolContext| {
            let this = this.clone();
            async move {
                let mut args = args;
                if args.background.take() == Some(true) {
                    return this.start_background(args, &ctx);
                }
                match this.agent(args, &ctx).await {
                    Ok(v) => summary_result(&v),
                    Err(message) => ToolResult::failed(message),
                }
            }
        })
    }

    /// The `evaluate` tool: [`EvaluateArgs`] through [`Tool::typed`], then
    /// [`SubAgents::evaluate`].
    ///
    /// # Errors
    /// None in practice: the spec is fixed ([`Tool::typed`] checks it).
    pub fn evaluate_tool(self: Arc<Self>) -> Result<Tool, RegistryError> {
        let mut spec = ToolSpec::new("evaluate", EVALUATE_DESCRIPTION, Value::Null)
            .with_timeout(Duration::from_secs(3600));
        spec.input_examples = evaluate_examples();
        let this = self;
        Tool::typed(spec, move |args: EvaluateArgs, ctx: ToolContext| {
            let this = this.clone();
            async move {
                match this.evaluate(args, &ctx).await {
                    Ok(v) => summary_result(&v),
                    Err(message) => ToolResult::failed(message),
                }
            }
        })
    }

    /// Runs an `agent` call (the tool's body): returns the summary object
    /// or a message for the model.
    ///
    /// # Errors
    /// Bad arguments (with what to change), an unknown preset, skill or trace.
    pub async fn agent(&self, args: AgentArgs, ctx: &ToolContext) -> Result<Value, String> {
        let (tasks, explore) = match args.task {
            Task::One(t) => (vec![checked_text("task", t)?], false),
            Task::Many(items) => {
                if items.is_empty() || items.len() > MAX_TASKS {
                    return Err(format!(
                        "`task` as a list takes 1 to {MAX_TASKS} tasks; got {}",
                        items.len()
                    ));
                }
                let tasks = items
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| checked_text(&format!("task[{i}]"), t))
                    .collect::<Result<Vec<_>, _>>()?;
                (tasks, true)
            }
        };
        let mode = if explore { "explore" } else { "delegate" };
        let goal_id = non_blank(args.goal_id.as_deref()).map(str::to_owned);
        let messages = per_task_messages(args.messages, tasks.len())?;
        let continue_from = non_blank(args.continue_from.as_deref());
        if continue_from.is_some() && explore {
            return Err(
                "`continue_from` resumes one sub-agent: give `task` as a single string".to_owned(),
            );
        }
        let preset = match non_blank(args.agent_type.as_deref()) {
            Some(name) => Some(self.presets.get(name)?.clone()),
            None => None,
        };
        let skills = match args.skills {
            None => preset
                .as_ref()
                .map(|p| p.skills.clone())
                .unwrap_or_default(),
            Some(names) if names.len() <= MAX_SKILLS => names,
            Some(names) => {
                return Err(format!(
                    "`skills` lists {} names; at most {MAX_SKILLS}",
                    names.len()
                ));
            }
        };
        let mut tools = self.tools.clone().without(&["agent", "evaluate"]);
        if explore {
            tools = tools.read_only();
        }
        if let Some(p) = &preset {
            if !p.allow.is_empty() {
                tools = tools.allow(p.allow.clone());
            }
            if !p.deny.is_empty() {
                tools = tools.deny(p.deny.clone());
            }
        }
        let default_prompt = if explore {
            EXPLORE_PROMPT
        } else {
            DELEGATE_PROMPT
        };
        let system = self.system_prompt(
            preset
                .as_ref()
                .and_then(|p| p.system_prompt.as_deref())
                .unwrap_or(default_prompt),
            &skills,
        )?;
        let parent = ctx.trace_id().unwrap_or("trace").to_owned();

        let mut runs = Vec::with_capacity(tasks.len());
        for (i, task) in tasks.iter().enumerate() {
            let (id, mut conversation, first_task) = match continue_from {
                Some(id) => {
                    // Only the calling trace's own sub-traces: another
                    // trace's is answered as unknown (its existence is
                    // not disclosed either).
                    let Some(stored) = self.store.get(id).filter(|t| t.parent == parent) else {
                        return Err(format!(
                            "no sub-trace `{id}` to continue in this trace; use a trace_id an earlier `agent` call of this trace returned"
                        ));
                    };
                    (stored.trace_id, stored.messages, stored.task)
                }
                None => (self.store.next_id(&parent, mode), Vec::new(), task.clone()),
            };
            conversation.extend(messages[i].iter().cloned());
            conversation.push(Message::user(task.clone()));
            runs.push((id, conversation, first_task, task.clone()));
        }
        if let Some(goal) = &goal_id {
            let ids: Vec<String> = runs.iter().map(|r| r.0.clone()).collect();
            goals::mark(ctx, goal, mode, &ids).await?;
        }
        let outcomes = join_all(
            runs.into_iter()
                .map(|(id, conversation, first_task, task)| {
                    let agent = self.agent_for(tools.clone(), system.clone(), &id, ctx);
                    async move {
                        let result = agent.run_conversation(conversation).await;
                        (id, first_task, task, result)
                    }
                }),
        )
        .await;
        let mut results = Vec::with_capacity(outcomes.len());
        for (id, first_task, task, result) in outcomes {
            results.push(self.record(&parent, mode, id, first_task, &task, result));
        }
        let mut summary = json!({"mode": mode, "results": results});
        if let Some(goal) = goal_id {
            summary["goal_id"] = json!(goal);
        }
        Ok(summary)
    }

    /// Runs an `evaluate` call: returns the verdict object or a message for the model.
    ///
    /// # Errors
    /// No goal description to judge against, bad `messages`, an unknown trace.
    pub async fn evaluate(&self, args: EvaluateArgs, ctx: &ToolContext) -> Result<Value, String> {
        let target = non_blank(args.target_goal_id.as_deref()).or(ctx.goal_id());
        let (goal_id, description, in_tree) = self.goal_description(target, ctx).await?;
        let given = to_messages(args.messages.unwrap_or_default(), "messages")?;
        let parent = ctx.trace_id().unwrap_or("trace").to_owned();
        let task = format!(
            "Goal{}: {description}\n\nJudge whether the result shown above meets this goal.",
            goal_id
                .as_deref()
                .map(|g| format!(" `{g}`"))
                .unwrap_or_default()
        );
        let (id, mut conversation, first_task) = match non_blank(args.continue_from.as_deref()) {
            Some(id) => {
                // As for `agent`: the calling trace's own sub-traces only.
                let Some(stored) = self.store.get(id).filter(|t| t.parent == parent) else {
                    return Err(format!("no sub-trace `{id}` to continue in this trace"));
                };
                (stored.trace_id, stored.messages, stored.task)
            }
            None => (
                self.store.next_id(&parent, "evaluate"),
                Vec::new(),
                task.clone(),
            ),
        };
        conversation.extend(given);
        conversation.push(Message::user(task.clone()));
        if let (Some(goal), true) = (&goal_id, in_tree) {
            goals::mark(ctx, goal, "evaluate", std::slice::from_ref(&id)).await?;
        }
        let tools = self
            .tools
            .clone()
            .without(&["agent", "evaluate"])
            .read_only();
        let agent = self.agent_for(tools, EVALUATE_PROMPT.to_owned(), &id, ctx);
        let result = agent.run_conversation(conversation).await;
        let mut summary = self.record(&parent, "evaluate", id, first_task, &task, result);
        let text = summary
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let (verdict, reason, suggestions) = read_verdict(&text);
        summary["goal_id"] = json!(goal_id);
        summary["verdict"] = json!(verdict);
        summary["reason"] = json!(reason);
        summary["suggestions"] = json!(suggestions);
        Ok(summary)
    }

    /// The goal `evaluate` judges against: its id, its text, and whether it
    /// came from the trace's goal tree. Looked up in the goals the host
    /// registered, then the goal tree, then the context values.
    async fn goal_description(
        &self,
        target: Option<&str>,
        ctx: &ToolContext,
    ) -> Result<(Option<String>, String, bool), String> {
        let from_ctx_goals = |id: &str| {
            ctx.value("goals")
                .and_then(|g| g.get(id))
                .and_then(|d| {
                    d.as_str()
                        .or_else(|| d.get("description").and_then(Value::as_str))
                })
                .map(str::to_owned)
        };
        if let Some(id) = target {
            if let Some(d) = self.goals.get(id) {
                return Ok((Some(id.to_owned()), d.clone(), false));
            }
            if let Some(d) = goals::from_tree(ctx, id).await? {
                return Ok((Some(id.to_owned()), d, true));
            }
            if let Some(d) = from_ctx_goals(id) {
                return Ok((Some(id.to_owned()), d, false));
            }
        }
        if let Some(goal) = ctx.value("goal") {
            if let Some(d) = goal
                .as_str()
                .or_else(|| goal.get("description").and_then(Value::as_str))
            {
                let id = goal
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or(target.map(str::to_owned));
                return Ok((id, d.to_owned(), false));
            }
        }
        if target.is_none() && self.goals.len() == 1 {
            if let Some((id, d)) = self.goals.iter().next() {
                return Ok((Some(id.clone()), d.clone(), false));
            }
        }
        let known: Vec<String> = self.goals.keys().map(|k| format!("`{k}`")).collect();
        Err(match target {
            Some(id) => format!(
                "no goal `{id}` is registered or in the trace's goal tree; target_goal_id must be one of: {}",
                if known.is_empty() {
                    "(none registered)".to_owned()
                } else {
                    known.join(", ")
                }
            ),
            None => {
                "no goal to evaluate against: the host gives no current goal; pass target_goal_id"
                    .to_owned()
            }
        })
    }

    fn system_prompt(&self, base: &str, skills: &[String]) -> Result<String, String> {
        if skills.is_empty() {
            return Ok(base.to_owned());
        }
        let Some(source) = &self.skills else {
            return Err("this host has no skills configured; leave `skills` out".to_owned());
        };
        let mut prompt = base.to_owned();
        for name in skills {
            let text = source.skill(name)?;
            prompt.push_str(&format!("\n\n## Skill `{name}`\n\n{text}"));
        }
        Ok(prompt)
    }

    fn agent_for(&self, tools: RegistryView, system: String, id: &str, ctx: &ToolContext) -> Agent {
        Agent::with_shared_client(self.client.clone(), tools)
            .system(system)
            .limits(self.limits.clone())
            .trace_id(id)
            .context(ctx.clone())
            .cancellation(ctx.cancellation_token().child_token())
    }

    /// Stores a finished run and returns its summary.
    fn record(
        &self,
        parent: &str,
        mode: &str,
        id: String,
        first_task: String,
        task: &str,
        result: Result<RunOutput, crate::agent::AgentError>,
    ) -> Value {
        let (messages, summary) = match result {
            Ok(out) => {
                let summary = json!({
                    "task": task,
                    "trace_id": id,
                    "text": out.text,
                    "turns": out.turns,
                    "tool_calls": out.tool_calls,
                    "errors": out.tool_errors,
                    "stop": out.stop,
                });
                (out.messages, summary)
            }
            Err(e) => {
                let messages = match &e {
                    crate::agent::AgentError::Model { messages, .. } => messages.clone(),
                    _ => Vec::new(),
                };
                let summary = json!({"task": task, "trace_id": id, "error": e.to_string()});
                (messages, summary)
            }
        };
        let stored = StoredTrace {
            trace_id: id,
            parent: parent.to_owned(),
            mode: mode.to_owned(),
            task: first_task,
            messages,
        };
        if let Err(e) = self.store.save(stored) {
            tracing::warn!(target: "tool_agent", error = %e, "sub-trace not written to the trace folder");
        }
        summary
    }
}

const AGENT_DESCRIPTION: &str = "Start sub-agents. `task` as one string delegates it to one sub-agent with your tools (except `agent` and `evaluate`); a list of strings explores the tasks in parallel, one read-only sub-agent each. Returns, per task, the sub-agent's final text, its turns, tool calls and errors, and its trace_id (pass it as `continue_from` to resume that sub-agent).";
const EVALUATE_DESCRIPTION: &str = "Judge whether the result of a goal meets the goal's description, with a read-only sub-agent. Put the result and its context in `messages`; the goal's description is supplied by the host. Returns a verdict (pass/fail), the reason and suggestions.";

/// The arguments of the `agent` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AgentArgs {
    /// One task (delegate) or a list of 1 to 16 tasks run in parallel (explore).
    pub task: Task,
    /// Messages placed before the task: one list for every sub-agent, or one list per task.
    pub messages: Option<MessageLists>,
    /// A `trace_id` returned earlier: resume that sub-agent (single task only).
    pub continue_from: Option<String>,
    /// A preset defined by the host (system prompt, tools, skills).
    pub agent_type: Option<String>,
    /// Skills appended to the sub-agent's system prompt; replaces the preset's.
    pub skills: Option<Vec<String>>,
    /// Run in the background: return at once with a job id; read the result
    /// with `job_output`, cancel with `job_kill`.
    pub background: Option<bool>,
    /// The id of the goal (from the `goal` tool) these sub-agents work on:
    /// it is marked as an agent call with their trace ids.
    pub goal_id: Option<String>,
}

/// The arguments of the `evaluate` tool.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct EvaluateArgs {
    /// The result to judge and its context.
    pub messages: Option<Vec<ChatMessage>>,
    /// The goal to judge (default: the current goal).
    pub target_goal_id: Option<String>,
    /// A `trace_id` of an earlier evaluation to continue.
    pub continue_from: Option<String>,
}

/// `agent`'s `task`: one string (delegate) or a list of strings (explore).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum Task {
    /// One task, delegated to one sub-agent.
    One(String),
    /// Several tasks, explored in parallel by read-only sub-agents.
    Many(Vec<String>),
}

/// `agent`'s `messages`: one list shared by every task, or one list per task.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum MessageLists {
    /// One list, placed before every task.
    Shared(Vec<ChatMessage>),
    /// One list per task, in the order of the tasks.
    PerTask(Vec<Vec<ChatMessage>>),
}

/// One message given to a sub-agent.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(inline)]
pub struct ChatMessage {
    /// Who says it.
    #[schemars(extend("enum" = ["user", "assistant"]))]
    pub role: String,
    /// What is said (at most 200,000 bytes).
    pub content: String,
}

/// Input examples of `agent` (sent where the provider takes them, like the
/// built-ins' `# Examples`): one task, parallel exploration, a background run.
fn agent_examples() -> Vec<Value> {
    vec![
        json!({"task": "Find where the HTTP retry policy is configured and summarise it in three lines."}),
        json!({"task": ["List the public functions of src/parser.rs", "List the tests that cover src/parser.rs"]}),
        json!({"task": "Run the full test suite and report the failures.", "background": true}),
    ]
}

/// Input examples of `evaluate`: judging a result given as messages, and
/// judging against a goal of the goal tree.
fn evaluate_examples() -> Vec<Value> {
    vec![
        json!({"messages": [{"role": "user", "content": "Add a --verbose flag to the CLI."},
                            {"role": "assistant", "content": "Added --verbose; it sets the log level to debug."}]}),
        json!({"target_goal_id": "1.2"}),
    ]
}

fn summary_result(summary: &Value) -> ToolResult {
    let text = serde_json::to_string_pretty(summary).unwrap_or_else(|_| summary.to_string());
    let all_failed = summary
        .get("results")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty() && r.iter().all(|x| x.get("error").is_some()))
        || summary.get("error").is_some();
    let result = ToolResult::ok(text.clone()).with_metadata(meta::STRUCTURED, summary.clone());
    if all_failed {
        ToolResult::failed(text)
    } else {
        result
    }
}

/// `text` when it is not blank and at most [`MAX_TEXT`] bytes (serde has
/// checked that it is a string).
fn checked_text(what: &str, text: String) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(format!("`{what}` is empty; describe the task"));
    }
    if text.len() > MAX_TEXT {
        return Err(format!(
            "`{what}` is {} bytes; at most {MAX_TEXT}",
            text.len()
        ));
    }
    Ok(text)
}

/// An optional string argument, a blank one counting as absent.
fn non_blank(value: Option<&str>) -> Option<&str> {
    value.filter(|s| !s.trim().is_empty())
}

/// The messages of `what` as conversation messages: at most
/// [`MAX_MESSAGES`], each content checked by [`checked_text`].
fn to_messages(items: Vec<ChatMessage>, what: &str) -> Result<Vec<Message>, String> {
    if items.len() > MAX_MESSAGES {
        return Err(format!(
            "`{what}` has {} messages; at most {MAX_MESSAGES}",
            items.len()
        ));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let content = checked_text(&format!("{what}[{i}].content"), m.content)?;
            match m.role.as_str() {
                "user" => Ok(Message::user(content)),
                "assistant" => Ok(Message::assistant(content)),
                r => Err(format!(
                    "`{what}[{i}].role` is `{}`; use `user` or `assistant`",
                    tool_rules::text::clip(r, tool_rules::text::Clip::chars(40))
                )),
            }
        })
        .collect()
}

/// `messages` as one list per task: none, one shared list, or one list per task.
fn per_task_messages(
    lists: Option<MessageLists>,
    tasks: usize,
) -> Result<Vec<Vec<Message>>, String> {
    match lists {
        None => Ok(vec![Vec::new(); tasks]),
        Some(MessageLists::Shared(items)) => {
            let shared = to_messages(items, "messages")?;
            Ok(vec![shared; tasks])
        }
        Some(MessageLists::PerTask(lists)) => {
            if lists.len() != tasks {
                return Err(format!(
                    "`messages` has {} lists for {tasks} task(s); give one list per task, or one flat list shared by all",
                    lists.len()
                ));
            }
            lists
                .into_iter()
                .enumerate()
                .map(|(i, m)| to_messages(m, &format!("messages[{i}]")))
                .collect()
        }
    }
}

/// The verdict, reason and suggestions of an evaluation's final text: the
/// first JSON object in it with a `verdict`, else `unclear` with the text as
/// the reason.
fn read_verdict(text: &str) -> (String, String, Vec<String>) {
    let parsed = text
        .find('{')
        .zip(text.rfind('}'))
        .filter(|(a, b)| a < b)
        .and_then(|(a, b)| serde_json::from_str::<Value>(&text[a..=b]).ok());
    if let Some(v) = parsed.filter(|v| v.get("verdict").is_some()) {
        let verdict = match v["verdict"]
            .as_str()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("pass" | "passed" | "yes" | "met") => "pass",
            Some("fail" | "failed" | "no" | "not met") => "fail",
            _ => "unclear",
        };
        let reason = v
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let suggestions = v
            .get("suggestions")
            .and_then(Value::as_array)
            .map(|s| {
                s.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        return (verdict.to_owned(), reason, suggestions);
    }
    ("unclear".to_owned(), text.to_owned(), Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each example decodes as the tool's arguments and uses only the
    /// schema's properties, with 1 to 3 examples per tool.
    #[test]
    fn the_examples_fit_the_schemas() {
        fn check<A: serde::de::DeserializeOwned + schemars::JsonSchema>(examples: &[Value]) {
            assert!((1..=3).contains(&examples.len()), "{}", examples.len());
            let schema = serde_json::to_value(schemars::schema_for!(A)).unwrap();
            let properties = schema["properties"].as_object().unwrap();
            for example in examples {
                for key in example.as_object().unwrap().keys() {
                    assert!(properties.contains_key(key), "{key} in {example}");
                }
                serde_json::from_value::<A>(example.clone())
                    .unwrap_or_else(|e| panic!("{example}: {e}"));
            }
        }
        check::<AgentArgs>(&agent_examples());
        check::<EvaluateArgs>(&evaluate_examples());
        // The parallel example is a list of tasks, the background one sets the flag.
        let parallel: AgentArgs = serde_json::from_value(agent_examples()[1].clone()).unwrap();
        assert!(matches!(parallel.task, Task::Many(ref t) if t.len() == 2));
        let background: AgentArgs = serde_json::from_value(agent_examples()[2].clone()).unwrap();
        assert_eq!(background.background, Some(true));
    }

    #[test]
    fn verdicts_are_read_from_json_or_left_unclear() {
        let (v, r, s) = read_verdict(
            "Here: {\"verdict\": \"FAIL\", \"reason\": \"no tests\", \"suggestions\": [\"add tests\"]}",
        );
        assert_eq!(
            (v.as_str(), r.as_str(), s),
            ("fail", "no tests", vec!["add tests".to_owned()])
        );
        assert_eq!(read_verdict("looks fine").0, "unclear");
    }

    #[test]
    fn messages_are_shared_or_per_task() {
        let lists = |v: Value| Some(serde_json::from_value::<MessageLists>(v).unwrap());
        let shared = json!([{"role": "user", "content": "ctx"}]);
        assert_eq!(
            per_task_messages(lists(shared), 2).unwrap(),
            vec![vec![Message::user("ctx")]; 2]
        );
        let per =
            json!([[{"role": "user", "content": "a"}], [{"role": "assistant", "content": "b"}]]);
        let got = per_task_messages(lists(per.clone()), 2).unwrap();
        assert_eq!(got[1], vec![Message::assistant("b")]);
        let err = per_task_messages(lists(per), 3).unwrap_err();
        assert!(err.contains("2 lists for 3 task(s)"), "{err}");
        let err =
            per_task_messages(lists(json!([{"role": "system", "content": "x"}])), 1).unwrap_err();
        assert!(err.contains("use `user` or `assistant`"), "{err}");
        assert_eq!(per_task_messages(None, 2).unwrap(), vec![Vec::new(); 2]);
    }
}
