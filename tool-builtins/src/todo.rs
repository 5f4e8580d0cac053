//! `todo_write` and `todo_read`: the session's task list, in the shape
//! Claude Code's `TodoWrite` and the design notes use: items with `content`,
//! a `status` of `pending`, `in_progress` or `completed` (at most one in
//! progress), and an optional `active_form` (the item as a present
//! participle, "Running the tests", shown while it is in progress).
//!
//! The list belongs to the trace: it is kept in the state store
//! ([`tool_core::state`], cross-cutting §2) under space [`STATE_SPACE`],
//! owner the trace id, workspace the root, so it survives across `tool
//! --trace-id T` processes, and another trace starts with none. Each write
//! replaces the whole list (the model sends it complete, as with Claude
//! Code). The host sees every change through a [`TodoHook`] in the context
//! (an event: the new list), and the model gets it back rendered compactly,
//! one line per item.
//!
//! Bounds: at most [`MAX_TODOS`] items of at most [`MAX_TODO_CHARS`]
//! characters per field, and at most [`MAX_TODO_LIST_BYTES`] for the whole
//! list as stored; a list over any is refused whole, with the rule. Item
//! text is kept on one line (escapes and controls removed, line breaks
//! folded); keys other than `content`, `status`, `active_form` are refused.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::state::{StateKey, StateStore};
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, tool};

use crate::fs::workspace::workspace_of;

/// The [`StateKey`] space of task lists: `tasks`.
pub const STATE_SPACE: &str = "tasks";
/// Most items in one list: 100.
pub const MAX_TODOS: usize = 100;
/// Longest `content` or `active_form`, in characters: 500.
pub const MAX_TODO_CHARS: usize = 500;
/// Most bytes of the whole list as stored (JSON): 64 KiB, the default
/// state store's cap of one value. 100 items of 500 characters each fit
/// only when short; a longer list is refused with what to shorten.
pub const MAX_TODO_LIST_BYTES: usize = 64 * 1024;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on now (at most one item).
    InProgress,
    /// Done.
    Completed,
}

/// One item of the task list. Keys other than these three are refused
/// (a misspelt `activeFrom` is not silently dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do, in the imperative ("Run the tests").
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: TodoStatus,
    /// The same as a present participle ("Running the tests"), shown while in progress.
    #[serde(default, alias = "activeForm", skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

/// Told of every change of a trace's task list (the new list, complete);
/// put one in the context with `ToolContext::with_state(TodoHook::new(...))`.
/// Called on the tool's task: hand the list to a channel rather than block.
#[derive(Clone)]
pub struct TodoHook(Arc<TodoListener>);

/// What a [`TodoHook`] calls: the trace id (if any) and the new list.
pub type TodoListener = dyn Fn(Option<&str>, &[TodoItem]) + Send + Sync;

impl TodoHook {
    /// A hook calling `f` with the trace id (if any) and the new list.
    pub fn new(f: impl Fn(Option<&str>, &[TodoItem]) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }
}

impl std::fmt::Debug for TodoHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TodoHook")
    }
}

fn key_and_store(context: &ToolContext) -> Result<(StateKey, Arc<dyn StateStore>), ToolError> {
    let ws = workspace_of(context)?;
    let key = StateKey::new(
        STATE_SPACE,
        context.trace_id().unwrap_or("untraced"),
        ws.root(),
    )
    .map_err(|e| ToolError::new(ErrorKind::InvalidArguments, e.to_string()))?;
    let store = tool_core::state::store_of(context).ok_or_else(|| {
        ToolError::new(
            ErrorKind::MissingContext,
            "The task list needs a state store: neither XDG_STATE_HOME nor HOME names a \
             folder, and the context has none (ToolContext::with_state(Arc<dyn StateStore>)).",
        )
    })?;
    Ok((key, store))
}

/// The list as the model sees it: a count, then one line per item.
fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "The task list is empty.".to_owned();
    }
    let done = items
        .iter()
        .filter(|i| i.status == TodoStatus::Completed)
        .count();
    let mut text = format!("Tasks ({done} of {} done):", items.len());
    for item in items {
        let (mark, extra) = match item.status {
            TodoStatus::Pending => ("[ ]", String::new()),
            TodoStatus::Completed => ("[x]", String::new()),
            TodoStatus::InProgress => (
                "[>]",
                item.active_form
                    .as_deref()
                    .filter(|a| !a.trim().is_empty())
                    .map(|a| format!(" ({a})"))
                    .unwrap_or_default(),
            ),
        };
        text.push_str(&format!("\n{mark} {}{extra}", item.content.trim()));
    }
    text
}

fn check(items: &[TodoItem]) -> Result<(), ToolError> {
    let invalid = |m: String| ToolError::new(ErrorKind::InvalidArguments, m);
    if items.len() > MAX_TODOS {
        return Err(invalid(format!(
            "The list has {} items; at most {MAX_TODOS} are kept. Merge small steps, or remove \
             completed ones, and send it again.",
            items.len()
        )));
    }
    for (n, item) in items.iter().enumerate() {
        if item.content.trim().is_empty() {
            return Err(invalid(format!(
                "todos[{n}].content is empty: say what the task is."
            )));
        }
        let long = |s: &str| s.chars().count() > MAX_TODO_CHARS;
        for (field, text) in [
            ("content", Some(item.content.as_str())),
            ("active_form", item.active_form.as_deref()),
        ] {
            if text.is_some_and(long) {
                return Err(invalid(format!(
                    "todos[{n}].{field} is longer than {MAX_TODO_CHARS} characters; keep each \
                     task to one short sentence."
                )));
            }
        }
    }
    let busy: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.status == TodoStatus::InProgress)
        .map(|(n, _)| n)
        .collect();
    if busy.len() > 1 {
        return Err(invalid(format!(
            "{} tasks are in_progress (todos{busy:?}); at most one may be. Mark the others \
             pending or completed and send the list again.",
            busy.len()
        )));
    }
    Ok(())
}

/// Reads the trace's task list.
fn load(store: &dyn StateStore, key: &StateKey) -> Result<Vec<TodoItem>, ToolError> {
    let text = store.get(key, "list").map_err(|e| {
        ToolError::new(
            ErrorKind::Failed,
            format!("The task list could not be read: {e}"),
        )
    })?;
    match text {
        None => Ok(Vec::new()),
        Some(t) => serde_json::from_str(&t).map_err(|e| {
            ToolError::new(
                ErrorKind::Failed,
                format!(
                    "The stored task list is unreadable ({e}); write it again with todo_write."
                ),
            )
        }),
    }
}

/// Replaces the session's task list. Use it to plan work of three steps or
/// more and to show progress: mark a task `in_progress` before starting it
/// (at most one at a time) and `completed` as soon as it is done.
///
/// Send the whole list every time; it replaces the previous one.
///
/// # Arguments
/// * `todos` - The complete list, in order (at most 100 items).
///
/// # Examples
/// ```json
/// {"todos": [{"content": "Reproduce the bug", "status": "completed"}, {"content": "Fix the parser", "status": "in_progress", "active_form": "Fixing the parser"}, {"content": "Run the tests", "status": "pending"}]}
/// ```
#[tool(kind = "write", tags = ["tasks"], idempotent)]
pub async fn todo_write(
    todos: Vec<TodoItem>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let todos: Vec<TodoItem> = todos
        .into_iter()
        .map(|item| TodoItem {
            content: one_line(&item.content),
            status: item.status,
            active_form: item.active_form.as_deref().map(one_line),
        })
        .collect();
    check(&todos)?;
    let (key, store) = key_and_store(context)?;
    let text = serde_json::to_string(&todos)
        .map_err(|e| ToolError::new(ErrorKind::Failed, e.to_string()))?;
    if text.len() > MAX_TODO_LIST_BYTES {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "The list takes {} bytes as stored; at most {MAX_TODO_LIST_BYTES} are kept. \
                 Shorten the tasks, leave out active_form, or remove completed ones, and send it \
                 again.",
                text.len()
            ),
        ));
    }
    let list = todos.clone();
    tool_core::run_blocking(move || {
        store.put(&key, "list", &text).map_err(|e| {
            // Only a full store is helped by a shorter list; an unreachable
            // one says what to do itself (review 32 F2).
            let advice = if e.kind() == tool_core::state::StateErrorKind::Full {
                " Shorten the tasks or remove completed ones, and send it again."
            } else {
                " Send it again once the state store answers."
            };
            ToolError::new(
                ErrorKind::Failed,
                format!("The task list was not saved: {e}.{advice}"),
            )
        })
    })
    .await??;
    let value = serde_json::to_value(&list).unwrap_or_default();
    let mut result = ToolResult::ok(render(&list))
        .with_metadata(tool_core::meta::MetaKey::custom("todos"), value);
    if let Some(hook) = context.state::<TodoHook>() {
        // The list is saved: a failing hook must not make the model think
        // otherwise (a panic would read as "the tool crashed, no result").
        let told = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (hook.0.0)(context.trace_id(), &list);
        }));
        if told.is_err() {
            result.add_note(
                "The list was saved, but the host's TodoHook failed (it panicked), so the host \
                 may not show this change.",
            );
        }
    }
    Ok(result)
}

/// An item's text on one line: terminal escapes and control characters
/// removed (the cleaner of job output), line breaks and other runs of
/// whitespace folded into one space, so one item never renders as several
/// list lines.
fn one_line(text: &str) -> String {
    crate::shell::ansi::clean_text(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Shows the session's task list: each task with its status.
#[tool(kind = "read", tags = ["tasks"], read_only, idempotent)]
pub async fn todo_read(context: &ToolContext) -> Result<ToolResult, ToolError> {
    let (key, store) = key_and_store(context)?;
    let list = tool_core::run_blocking(move || load(store.as_ref(), &key)).await??;
    let value = serde_json::to_value(&list).unwrap_or_default();
    Ok(ToolResult::ok(render(&list))
        .with_metadata(tool_core::meta::MetaKey::custom("todos"), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(content: &str, status: TodoStatus) -> TodoItem {
        TodoItem {
            content: content.to_owned(),
            status,
            active_form: None,
        }
    }

    #[test]
    fn the_list_renders_one_line_per_item_with_the_active_form_in_progress() {
        let mut busy = item("Run the tests", TodoStatus::InProgress);
        busy.active_form = Some("Running the tests".into());
        let text = render(&[
            item("Write the parser", TodoStatus::Completed),
            busy,
            item("Update the README", TodoStatus::Pending),
        ]);
        assert_eq!(
            text,
            "Tasks (1 of 3 done):\n[x] Write the parser\n[>] Run the tests (Running the \
             tests)\n[ ] Update the README"
        );
        assert_eq!(render(&[]), "The task list is empty.");
    }

    #[test]
    fn two_items_in_progress_are_refused_naming_them() {
        let err = check(&[
            item("a", TodoStatus::InProgress),
            item("b", TodoStatus::Pending),
            item("c", TodoStatus::InProgress),
        ])
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArguments);
        assert!(
            err.message
                .starts_with("2 tasks are in_progress (todos[0, 2])"),
            "{err}"
        );
        let many: Vec<TodoItem> = (0..=MAX_TODOS)
            .map(|_| item("x", TodoStatus::Pending))
            .collect();
        assert!(check(&many).unwrap_err().message.contains("101 items"));
        assert!(
            check(&[item(" ", TodoStatus::Pending)])
                .unwrap_err()
                .message
                .contains("todos[0].content is empty")
        );
    }
}
