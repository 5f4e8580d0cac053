//! `goal`: the trace's goal tree. Goals have a description, the criteria a
//! result must meet, a status (`pending`, `in_progress`, `completed`,
//! `abandoned`), an optional parent (goals nest, at most [`MAX_DEPTH`]
//! deep) and, once done, a summary. The model adds goals, updates their
//! status and lists the tree; the `agent` tool of tool-agent marks the goal
//! a sub-agent works on (`type: agent_call`, its mode and sub-trace ids,
//! [`mark_agent_call`]) and `evaluate` reads the goal's description and
//! criteria from here ([`goal_of`]) instead of taking criteria from the
//! model.
//!
//! Ids are positional: top-level goals are `1`, `2`, …; the children of
//! `2` are `2.1`, `2.2`, …. Goals are never removed (mark them
//! `abandoned`), so an id names one goal for the trace's whole life.
//!
//! The tree belongs to the trace, as the task list does ([`crate::todo`]):
//! it is kept in the state store ([`tool_core::state`], cross-cutting §2)
//! under space [`STATE_SPACE`], owner the trace id, workspace the root,
//! one field per goal (its id), so parallel sub-agents of one trace that
//! change different goals never overwrite each other and a change of one
//! goal is a compare-and-set on that goal alone.
//!
//! Bounds: at most [`MAX_GOALS`] goals, [`MAX_CRITERIA`] criteria of at
//! most [`MAX_GOAL_CHARS`] characters, a description of at most
//! [`MAX_GOAL_CHARS`], a summary of at most [`MAX_SUMMARY_CHARS`], the last
//! [`MAX_SUB_TRACES`] sub-trace ids; anything over a bound is refused whole,
//! with the rule.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::state::{StateKey, StateStore};
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, tool};

use crate::fs::workspace::workspace_of;

/// The [`StateKey`] space of goal trees: `goals`.
pub const STATE_SPACE: &str = "goals";
/// Most goals in one trace's tree: 100.
pub const MAX_GOALS: usize = 100;
/// Deepest nesting: 6 levels (`1.1.1.1.1.1`).
pub const MAX_DEPTH: usize = 6;
/// Most criteria of one goal: 10.
pub const MAX_CRITERIA: usize = 10;
/// Longest description or criterion, in characters: 500.
pub const MAX_GOAL_CHARS: usize = 500;
/// Longest summary, in characters: 2000.
pub const MAX_SUMMARY_CHARS: usize = 2000;
/// Most sub-trace ids kept per goal (the latest): 32.
pub const MAX_SUB_TRACES: usize = 32;
/// Attempts of one compare-and-set change before giving up: 16.
const MAX_ATTEMPTS: usize = 16;

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Met (the summary says how).
    Completed,
    /// Given up (kept, so its id stays taken).
    Abandoned,
}

/// What `goal` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoalAction {
    /// Add a goal (`description`, optional `criteria` and `parent`).
    Add,
    /// Change a goal (`id`, then any of `status`, `summary`, `criteria`, `description`).
    Update,
    /// Show the tree (or one goal with `id`).
    List,
}

/// How a goal is being worked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoalKind {
    /// By the agent itself.
    #[default]
    Normal,
    /// By sub-agents started with the `agent` tool (or judged by `evaluate`).
    AgentCall,
}

/// One goal of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Goal {
    /// Positional id: `1`, `2`, … at the top, `2.1`, `2.2`, … below `2`.
    pub id: String,
    /// What the goal is.
    pub description: String,
    /// What a result must meet to complete the goal (may be empty).
    #[serde(default)]
    pub criteria: Vec<String>,
    /// Where it stands.
    pub status: GoalStatus,
    /// `normal`, or `agent_call` once an `agent`/`evaluate` call named it.
    #[serde(default, rename = "type")]
    pub kind: GoalKind,
    /// The mode of the last `agent` call on it (`delegate`, `explore`, `evaluate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_call_mode: Option<String>,
    /// The sub-traces started for it (the latest [`MAX_SUB_TRACES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sub_trace_ids: Vec<String>,
    /// What was done, once completed or abandoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl Goal {
    /// The parent's id (`2` for `2.1`); `None` at the top.
    pub fn parent(&self) -> Option<&str> {
        self.id.rsplit_once('.').map(|(p, _)| p)
    }

    /// The description followed by the criteria, one `- ` line each: the
    /// text `evaluate` judges a result against.
    pub fn brief(&self) -> String {
        let mut text = self.description.trim().to_owned();
        if !self.criteria.is_empty() {
            text.push_str("\nCriteria:");
            for c in &self.criteria {
                text.push_str(&format!("\n- {}", c.trim()));
            }
        }
        text
    }
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorKind::InvalidArguments, message)
}

fn failed(message: String) -> ToolError {
    ToolError::new(ErrorKind::Failed, message)
}

fn key_and_store(context: &ToolContext) -> Result<(StateKey, Arc<dyn StateStore>), ToolError> {
    let ws = workspace_of(context)?;
    let key = StateKey::new(
        STATE_SPACE,
        context.trace_id().unwrap_or("untraced"),
        ws.root(),
    )
    .map_err(|e| invalid(e.to_string()))?;
    let store = tool_core::state::store_of(context).ok_or_else(|| {
        ToolError::new(
            ErrorKind::MissingContext,
            "The goal tree needs a state store: neither XDG_STATE_HOME nor HOME names a \
             folder, and the context has none (ToolContext::with_state(Arc<dyn StateStore>)).",
        )
    })?;
    Ok((key, store))
}

/// The numeric segments of an id, for tree order (`2` before `10`).
fn order_of(id: &str) -> Vec<u32> {
    id.split('.')
        .map(|s| s.parse().unwrap_or(u32::MAX))
        .collect()
}

/// Every goal of the tree, in tree order (parents before children).
fn load_all(store: &dyn StateStore, key: &StateKey) -> Result<Vec<Goal>, ToolError> {
    let entries = store
        .entries(key)
        .map_err(|e| failed(format!("The goal tree could not be read: {e}")))?;
    let mut goals = entries
        .into_iter()
        .map(|(id, text)| {
            serde_json::from_str::<Goal>(&text).map_err(|e| {
                failed(format!(
                    "The stored goal `{id}` is unreadable ({e}); start a new trace id."
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    goals.sort_by_key(|g| order_of(&g.id));
    Ok(goals)
}

fn load_one(store: &dyn StateStore, key: &StateKey, id: &str) -> Result<Option<Goal>, ToolError> {
    let text = store
        .get(key, id)
        .map_err(|e| failed(format!("The goal tree could not be read: {e}")))?;
    text.map(|t| {
        serde_json::from_str::<Goal>(&t)
            .map_err(|e| failed(format!("The stored goal `{id}` is unreadable ({e}).")))
    })
    .transpose()
}

/// `id` when it has the shape of a goal id (`1`, `2.3`, at most [`MAX_DEPTH`] deep).
fn checked_id(id: &str) -> Result<&str, ToolError> {
    let id = id.trim();
    let parts: Vec<&str> = id.split('.').collect();
    let ok = !id.is_empty()
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 4
                && p.bytes().all(|b| b.is_ascii_digit())
                && !p.starts_with('0')
        });
    if ok && parts.len() > MAX_DEPTH {
        Err(invalid(format!(
            "`{}` is too deep to be a goal id: goals nest at most {MAX_DEPTH} deep.",
            tool_rules::text::clip(id, tool_rules::text::Clip::chars(40))
        )))
    } else if ok {
        Ok(id)
    } else {
        Err(invalid(format!(
            "`{}` is not a goal id: ids are numbers joined by dots (`1`, `2.1`), as `goal` \
             with action `list` shows them.",
            tool_rules::text::clip(id, tool_rules::text::Clip::chars(40))
        )))
    }
}

fn check_text(what: &str, text: &str, max: usize) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(invalid(format!("`{what}` is empty.")));
    }
    let n = text.chars().count();
    if n > max {
        return Err(invalid(format!(
            "`{what}` has {n} characters; at most {max}. Say it in one or two sentences."
        )));
    }
    Ok(())
}

fn check_criteria(criteria: &[String]) -> Result<(), ToolError> {
    if criteria.len() > MAX_CRITERIA {
        return Err(invalid(format!(
            "`criteria` lists {}; at most {MAX_CRITERIA}. Merge related ones.",
            criteria.len()
        )));
    }
    for (n, c) in criteria.iter().enumerate() {
        check_text(&format!("criteria[{n}]"), c, MAX_GOAL_CHARS)?;
    }
    Ok(())
}

fn to_text(goal: &Goal) -> Result<String, ToolError> {
    serde_json::to_string(goal).map_err(|e| failed(e.to_string()))
}

/// Changes goal `id` with `change` by compare-and-set, trying again (at
/// most [`MAX_ATTEMPTS`] times) when another writer changed it meanwhile.
fn change_goal(
    store: &dyn StateStore,
    key: &StateKey,
    id: &str,
    change: &dyn Fn(&mut Goal) -> Result<(), ToolError>,
) -> Result<Goal, ToolError> {
    for _ in 0..MAX_ATTEMPTS {
        let old = store
            .get(key, id)
            .map_err(|e| failed(format!("The goal tree could not be read: {e}")))?;
        let Some(old) = old else {
            let known: Vec<String> = load_all(store, key)?.into_iter().map(|g| g.id).collect();
            return Err(invalid(format!(
                "There is no goal `{id}` in this trace{}.",
                if known.is_empty() {
                    "; add one with action `add`".to_owned()
                } else {
                    format!("; its goals are {}", known.join(", "))
                }
            )));
        };
        let mut goal: Goal = serde_json::from_str(&old)
            .map_err(|e| failed(format!("The stored goal `{id}` is unreadable ({e}).")))?;
        change(&mut goal)?;
        let new = to_text(&goal)?;
        let done = store
            .compare_and_set(key, id, Some(&old), Some(&new))
            .map_err(|e| failed(format!("The goal was not saved: {e}")))?;
        if done {
            return Ok(goal);
        }
    }
    Err(failed(format!(
        "Goal `{id}` kept changing under other writers; try again."
    )))
}

/// Adds a goal under `parent` (or at the top), taking the next free id.
fn add_goal(
    store: &dyn StateStore,
    key: &StateKey,
    parent: Option<&str>,
    description: &str,
    criteria: &[String],
) -> Result<Goal, ToolError> {
    for _ in 0..MAX_ATTEMPTS {
        let all = load_all(store, key)?;
        if all.len() >= MAX_GOALS {
            return Err(invalid(format!(
                "The tree holds {} goals, the most it may; mark finished ones `completed` and \
                 reuse them, or work in broader goals.",
                all.len()
            )));
        }
        if let Some(p) = parent
            && !all.iter().any(|g| g.id == p)
        {
            return Err(invalid(format!(
                "There is no goal `{p}` to add a sub-goal to; list the goals with action `list`."
            )));
        }
        let siblings = all.iter().filter(|g| g.parent() == parent).count();
        let id = match parent {
            Some(p) => format!("{p}.{}", siblings + 1),
            None => (siblings + 1).to_string(),
        };
        if id.split('.').count() > MAX_DEPTH {
            return Err(invalid(format!(
                "Goals nest at most {MAX_DEPTH} deep; add this one under a higher goal."
            )));
        }
        let goal = Goal {
            id: id.clone(),
            description: description.trim().to_owned(),
            criteria: criteria.iter().map(|c| c.trim().to_owned()).collect(),
            status: GoalStatus::Pending,
            kind: GoalKind::Normal,
            agent_call_mode: None,
            sub_trace_ids: Vec::new(),
            summary: None,
        };
        let done = store
            .compare_and_set(key, &id, None, Some(&to_text(&goal)?))
            .map_err(|e| failed(format!("The goal was not saved: {e}")))?;
        if done {
            return Ok(goal);
        }
    }
    Err(failed(
        "Other writers kept adding goals at the same place; try again.".to_owned(),
    ))
}

fn mark(status: GoalStatus) -> &'static str {
    match status {
        GoalStatus::Pending => "[ ]",
        GoalStatus::InProgress => "[>]",
        GoalStatus::Completed => "[x]",
        GoalStatus::Abandoned => "[-]",
    }
}

/// The tree as the model sees it: a count, then one line per goal
/// (indented by depth) with its criteria, summary and sub-agent work.
pub fn render(goals: &[Goal]) -> String {
    if goals.is_empty() {
        return "The goal tree is empty.".to_owned();
    }
    let done = goals
        .iter()
        .filter(|g| g.status == GoalStatus::Completed)
        .count();
    let mut text = format!("Goals ({done} of {} completed):", goals.len());
    for g in goals {
        let indent = "  ".repeat(g.id.split('.').count() - 1);
        text.push_str(&format!(
            "\n{indent}{} {} {}",
            mark(g.status),
            g.id,
            g.description
        ));
        if g.kind == GoalKind::AgentCall {
            text.push_str(&format!(
                " (agent call: {}, {} sub-trace{})",
                g.agent_call_mode.as_deref().unwrap_or("?"),
                g.sub_trace_ids.len(),
                if g.sub_trace_ids.len() == 1 { "" } else { "s" }
            ));
        }
        if !g.criteria.is_empty() {
            text.push_str(&format!(
                "\n{indent}    criteria: {}",
                g.criteria.join("; ")
            ));
        }
        if let Some(s) = &g.summary {
            text.push_str(&format!("\n{indent}    summary: {s}"));
        }
    }
    text
}

/// Goal `id` of the context's trace, or `None` when the trace has no such
/// goal. Blocking (the state store's I/O): call it on a blocking thread
/// (`tool_core::run_blocking`).
///
/// # Errors
/// No workspace or state store in the context, a malformed id, an
/// unreadable store.
pub fn goal_of(context: &ToolContext, id: &str) -> Result<Option<Goal>, ToolError> {
    let id = checked_id(id)?;
    let (key, store) = key_and_store(context)?;
    load_one(store.as_ref(), &key, id)
}

/// Every goal of the context's trace, in tree order. Blocking, as [`goal_of`].
///
/// # Errors
/// As [`goal_of`].
pub fn goals_of(context: &ToolContext) -> Result<Vec<Goal>, ToolError> {
    let (key, store) = key_and_store(context)?;
    load_all(store.as_ref(), &key)
}

/// Marks goal `id` as worked on by sub-agents: `type: agent_call`, the
/// call's `mode`, the new `sub_trace_ids` appended (the latest
/// [`MAX_SUB_TRACES`] kept), and a `pending` goal moved to `in_progress`.
/// Returns the goal as stored. Blocking, as [`goal_of`].
///
/// # Errors
/// As [`goal_of`], and an unknown goal (with the known ids).
pub fn mark_agent_call(
    context: &ToolContext,
    id: &str,
    mode: &str,
    sub_trace_ids: &[String],
) -> Result<Goal, ToolError> {
    let id = checked_id(id)?;
    let (key, store) = key_and_store(context)?;
    change_goal(store.as_ref(), &key, id, &|g| {
        g.kind = GoalKind::AgentCall;
        g.agent_call_mode = Some(mode.to_owned());
        g.sub_trace_ids.extend(sub_trace_ids.iter().cloned());
        let over = g.sub_trace_ids.len().saturating_sub(MAX_SUB_TRACES);
        g.sub_trace_ids.drain(..over);
        if g.status == GoalStatus::Pending {
            g.status = GoalStatus::InProgress;
        }
        Ok(())
    })
}

/// Keeps the session's goal tree: goals with the criteria a result must
/// meet, nested under parent goals. Add the goals of a task before working
/// on it, mark one `in_progress` when you start it and `completed` with a
/// short summary when its criteria are met. `agent` and `evaluate` calls
/// can name a goal (`goal_id` / `target_goal_id`); `evaluate` judges
/// against the goal's criteria from this tree.
///
/// # Arguments
/// * `action` - `add` (needs `description`), `update` (needs `id`) or `list`.
/// * `description` - What the goal is (add; update replaces it). At most 500 characters.
/// * `criteria` - What a result must meet (add; update replaces them). At most 10.
/// * `parent` - The id of the goal to nest the new goal under (add); default: top level.
/// * `id` - The goal to update, or to show alone with `list`.
/// * `status` - The new status (update): `pending`, `in_progress`, `completed` or `abandoned`.
/// * `summary` - What was done (update), usually with `completed`. At most 2000 characters.
///
/// # Examples
/// ```json
/// {"action": "add", "description": "Fix the CSV parser", "criteria": ["quoted commas parse", "the test suite passes"]}
/// ```
/// ```json
/// {"action": "update", "id": "1", "status": "completed", "summary": "Quoted fields handled; 42 tests pass."}
/// ```
#[tool(kind = "write", tags = ["tasks", "goals"])]
#[allow(clippy::too_many_arguments)] // reason: one parameter per model-visible field of the tool
pub async fn goal(
    action: GoalAction,
    description: Option<String>,
    criteria: Option<Vec<String>>,
    parent: Option<String>,
    id: Option<String>,
    status: Option<GoalStatus>,
    summary: Option<String>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    if let Some(d) = &description {
        check_text("description", d, MAX_GOAL_CHARS)?;
    }
    if let Some(c) = &criteria {
        check_criteria(c)?;
    }
    if let Some(s) = &summary {
        check_text("summary", s, MAX_SUMMARY_CHARS)?;
    }
    let parent = parent
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .map(checked_id)
        .transpose()?
        .map(str::to_owned);
    let id = id
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .map(checked_id)
        .transpose()?
        .map(str::to_owned);
    let (key, store) = key_and_store(context)?;
    let (headline, touched) = match action {
        GoalAction::Add => {
            let Some(description) = description else {
                return Err(invalid(
                    "`add` needs a `description` of the goal (and, best, its `criteria`)."
                        .to_owned(),
                ));
            };
            if id.is_some() || status.is_some() || summary.is_some() {
                return Err(invalid(
                    "`add` takes `description`, `criteria` and `parent`; ids are given by the \
                     tree, and a new goal starts `pending`. Use `update` afterwards."
                        .to_owned(),
                ));
            }
            let store = store.clone();
            let key = key.clone();
            let added = tool_core::run_blocking(move || {
                add_goal(
                    store.as_ref(),
                    &key,
                    parent.as_deref(),
                    &description,
                    &criteria.unwrap_or_default(),
                )
            })
            .await??;
            (format!("Added goal {}.", added.id), Some(added))
        }
        GoalAction::Update => {
            let Some(id) = id.clone() else {
                return Err(invalid(
                    "`update` needs the `id` of the goal to change.".to_owned(),
                ));
            };
            if status.is_none() && summary.is_none() && criteria.is_none() && description.is_none()
            {
                return Err(invalid(format!(
                    "`update` of goal `{id}` changes nothing: give `status`, `summary`, \
                     `criteria` or `description`."
                )));
            }
            if parent.is_some() {
                return Err(invalid(
                    "A goal's place in the tree is fixed by its id; `parent` is for `add`."
                        .to_owned(),
                ));
            }
            let store = store.clone();
            let key = key.clone();
            let changed = tool_core::run_blocking(move || {
                change_goal(store.as_ref(), &key, &id, &|g| {
                    if let Some(s) = status {
                        g.status = s;
                    }
                    if let Some(s) = &summary {
                        g.summary = Some(s.trim().to_owned());
                    }
                    if let Some(c) = &criteria {
                        g.criteria = c.iter().map(|c| c.trim().to_owned()).collect();
                    }
                    if let Some(d) = &description {
                        g.description = d.trim().to_owned();
                    }
                    Ok(())
                })
            })
            .await??;
            (format!("Updated goal {}.", changed.id), Some(changed))
        }
        GoalAction::List => (String::new(), None),
    };
    let shown = id.filter(|_| action == GoalAction::List);
    let all = tool_core::run_blocking(move || load_all(store.as_ref(), &key)).await??;
    let body = match &shown {
        Some(one) => {
            let Some(g) = all.iter().find(|g| &g.id == one) else {
                return Err(invalid(format!(
                    "There is no goal `{one}` in this trace; leave `id` out to list them all."
                )));
            };
            render(std::slice::from_ref(g))
        }
        None => render(&all),
    };
    let output = if headline.is_empty() {
        body
    } else {
        format!("{headline}\n{body}")
    };
    let value = serde_json::to_value(&all).unwrap_or_default();
    let mut result =
        ToolResult::ok(output).with_metadata(tool_core::meta::MetaKey::custom("goals"), value);
    if let Some(g) = touched {
        result = result.with_metadata(tool_core::meta::MetaKey::custom("goal_id"), g.id);
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(id: &str, status: GoalStatus) -> Goal {
        Goal {
            id: id.to_owned(),
            description: format!("goal {id}"),
            criteria: Vec::new(),
            status,
            kind: GoalKind::Normal,
            agent_call_mode: None,
            sub_trace_ids: Vec::new(),
            summary: None,
        }
    }

    #[test]
    fn ids_are_checked_and_ordered_numerically() {
        assert_eq!(checked_id(" 2.10 ").unwrap(), "2.10");
        for bad in ["", "a", "1..2", "01", "1.2.3.4.5.6.7", "-1", "99999"] {
            let err = checked_id(bad).unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidArguments, "{bad}");
        }
        let mut ids = vec!["10", "2.1", "2", "1", "2.10", "2.9"];
        ids.sort_by_key(|i| order_of(i));
        assert_eq!(ids, ["1", "2", "2.1", "2.9", "2.10", "10"]);
    }

    #[test]
    fn the_tree_renders_indented_with_criteria_and_agent_work() {
        let mut top = goal("1", GoalStatus::InProgress);
        top.criteria = vec!["tests pass".into(), "no panics".into()];
        let mut child = goal("1.1", GoalStatus::Completed);
        child.summary = Some("done in 2 steps".into());
        let mut sub = goal("1.2", GoalStatus::Pending);
        sub.kind = GoalKind::AgentCall;
        sub.agent_call_mode = Some("explore".into());
        sub.sub_trace_ids = vec!["a".into(), "b".into()];
        assert_eq!(
            render(&[top.clone(), child, sub, goal("2", GoalStatus::Abandoned)]),
            "Goals (1 of 4 completed):\n[>] 1 goal 1\n    criteria: tests pass; no panics\n  \
             [x] 1.1 goal 1.1\n      summary: done in 2 steps\n  [ ] 1.2 goal 1.2 (agent call: \
             explore, 2 sub-traces)\n[-] 2 goal 2"
        );
        assert_eq!(top.brief(), "goal 1\nCriteria:\n- tests pass\n- no panics");
        assert_eq!(render(&[]), "The goal tree is empty.");
    }
}
