//! `--approve`: how confirmation-requiring calls are answered, by a person at
//! the terminal or unattended. Its own module so that the options (`cli`)
//! and the run (`session`) both use it without importing each other.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::ValueEnum;
use tool_core::{ApprovalDecision, ApprovalPolicy, ApprovalRequest, ToolKind};

/// How long the terminal question waits for an answer before the call is
/// denied (cross-cutting §4: every way to ask a person has a timeout and a
/// default answer; for approvals the default is "deny").
pub(crate) const ASK_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest answer line read from the terminal, in bytes.
const MAX_ANSWER: u64 = 1024;

/// `--approve`: how calls of tools that require a person's confirmation are
/// answered. Becomes the context's approver (a [`tool_core::ApprovalPolicy`])
/// and the named value `approval_policy`. Without the option, `tool call`
/// asks when stdin and stderr are both a terminal, and is `never` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum Approve {
    /// Approve nothing: confirmation-requiring calls are denied. The default
    /// when no person is at a terminal.
    #[default]
    Never,
    /// Approve tools of kind `read`; deny the rest.
    Read,
    /// Approve every call.
    All,
    /// Ask the person at the terminal (a y/N question on stderr, the answer
    /// read from /dev/tty); denied after 120 s, on end of input, or when
    /// there is no terminal. The default of `call` on a terminal.
    Ask,
}

impl Approve {
    /// The name as written on the command line (`never`, `read`, `all`, `ask`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Read => "read",
            Self::All => "all",
            Self::Ask => "ask",
        }
    }

    /// The choice when the option is not given: `ask` for `tool call` with a
    /// person at the terminal (stdin and stderr both terminals), else `never`.
    pub(crate) fn default_for(call: bool) -> Self {
        if call && std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Self::Ask
        } else {
            Self::Never
        }
    }

    /// The approver that answers for this choice; `program` names the
    /// running program in the refusal's hint.
    pub(crate) fn policy(self, program: &str) -> ApprovalPolicy {
        match self {
            Self::Never => {
                let hint = if crate::app::serving() {
                    format!(
                        "this call needs a person's confirmation and none is available: this \
                         MCP client cannot be asked (no elicitation); the server's operator can \
                         approve unattended with `{program} serve --approve all` (`--approve \
                         read` approves read-only tools)"
                    )
                } else {
                    format!(
                        "this call needs a person's confirmation and none is available: run it on \
                         a terminal to be asked, or approve unattended with `{program} --approve \
                         all call …` (`--approve read` approves read-only tools)"
                    )
                };
                ApprovalPolicy::new().ask(move |_: ApprovalRequest| {
                    let hint = hint.clone();
                    async move { ApprovalDecision::Deny(hint) }
                })
            }
            Self::Read => ApprovalPolicy::new().auto_approve(ToolKind::Read),
            Self::All => ApprovalPolicy::new().auto_approve_all(),
            Self::Ask => ApprovalPolicy::new().ask(|request: ApprovalRequest| async move {
                exit_on_interrupt();
                let asked = tokio::task::spawn_blocking(move || ask_terminal(&request));
                match tokio::time::timeout(ASK_TIMEOUT, asked).await {
                    Ok(Ok(decision)) => decision,
                    Ok(Err(_)) => ApprovalDecision::Deny("the terminal question failed".to_owned()),
                    Err(_) => ApprovalDecision::Deny(format!(
                        "nobody answered the confirmation question within {} s",
                        ASK_TIMEOUT.as_secs()
                    )),
                }
            }),
        }
    }
}

/// Whether [`exit_on_interrupt`] took over `SIGINT` already.
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Makes Ctrl-C (`SIGINT`) end the program with status 130 as before, and
/// when it comes while the y/N question waits, first ends the question's
/// line, so the shell's prompt does not land after `[y/N] ` (second review,
/// finding 7). The handler is installed here, synchronously, before the
/// question is written; once installed it stays for the rest of the run
/// (Tokio's handlers are never removed), and the task it wakes exits the
/// process as the default action would (no destructors ran then either) —
/// unless a `tool call` is running under [`crate::interrupt::block_on`],
/// which then cancels the call and exits itself (review 26, F2).
/// Needs the runtime's signal driver (`enable_all`); without it Ctrl-C keeps
/// its default action.
fn exit_on_interrupt() {
    if WATCHING.swap(true, Ordering::SeqCst) {
        return;
    }
    let Ok(mut interrupts) =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
    else {
        return;
    };
    tokio::spawn(async move {
        while interrupts.recv().await.is_some() {
            crate::interrupt::end_question_line();
            if !crate::interrupt::active() {
                std::process::exit(130);
            }
        }
    });
}

/// The terminal's confirmation question: the tool and its kind, the
/// model's arguments as JSON (at most 400 characters, the rest elided), the
/// values the application supplies, one line per parameter left out that
/// the tool fills with its default (`  quantity: 1 (default)`, the value as
/// JSON cut to 100 characters), then `Run it? [y/N] `. JSON escapes
/// control characters, so nothing here can move the cursor.
fn prompt_text(request: &ApprovalRequest) -> String {
    let arguments = serde_json::to_string(&request.arguments).unwrap_or_default();
    let shown = clipped(&arguments, 400);
    let injected = request
        .injected_line(400)
        .map(|line| format!("  {line}\n"))
        .unwrap_or_default();
    let defaults: String = request
        .defaults
        .iter()
        .map(|(name, value)| {
            format!(
                "  {}: {} (default)\n",
                clipped(name, 64),
                clipped(&value.to_string(), 100)
            )
        })
        .collect();
    format!(
        "`{}` ({}) needs your confirmation.\n  arguments: {shown}\n{injected}{defaults}Run it? [y/N] ",
        request.tool, request.kind
    )
}

/// `text`'s first `max` characters, with `…` when it had more.
fn clipped(text: &str, max: usize) -> String {
    tool_rules::text::clip(text, tool_rules::text::Clip::chars(max)).into_owned()
}

/// Asks on stderr and reads one line from `/dev/tty`: `y` or `yes`
/// (any case) approves, anything else denies.
fn ask_terminal(request: &ApprovalRequest) -> ApprovalDecision {
    let Ok(tty) = std::fs::File::open("/dev/tty") else {
        return ApprovalDecision::Deny(
            "this call needs a person's confirmation and there is no terminal to ask on".to_owned(),
        );
    };
    let prompt = prompt_text(request);
    crate::interrupt::PROMPTING.store(true, Ordering::SeqCst);
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    let read = BufReader::new(std::io::Read::take(tty, MAX_ANSWER)).read_line(&mut line);
    crate::interrupt::PROMPTING.store(false, Ordering::SeqCst);
    match read {
        Ok(n) if n > 0 && matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") => {
            ApprovalDecision::Approve
        }
        Ok(0) => ApprovalDecision::Deny("the terminal closed before an answer".to_owned()),
        _ => ApprovalDecision::Deny("the person at the terminal declined the call".to_owned()),
    }
}

/// The CLI's [`tool_core::Asker`] (cross-cutting §4): the question on
/// stderr (control characters and bidirectional overrides escaped, as in
/// `tool call`'s text output), numbered choices, one answer line read from `/dev/tty` (at most
/// 1024 bytes; a number picks that choice, other text is the answer as
/// typed, an empty line takes the question's default). Where stderr is not
/// a terminal or `/dev/tty` cannot be opened, the answer is "no person is
/// present". The wait itself is bounded by the question's timeout in
/// `tool_core::governance::asking::ask`.
pub(crate) fn terminal_asker() -> impl tool_core::Asker {
    |question: tool_core::Question| async move {
        if !std::io::stderr().is_terminal() {
            return tool_core::Answer::NoPerson(
                "this run has no terminal to ask on (stderr is not a terminal)".to_owned(),
            );
        }
        tokio::task::spawn_blocking(move || ask_question(&question))
            .await
            .unwrap_or_else(|_| {
                tool_core::Answer::NoPerson("the terminal question failed".to_owned())
            })
    }
}

/// Asks `question` on stderr and reads the answer from `/dev/tty`.
fn ask_question(question: &tool_core::Question) -> tool_core::Answer {
    use tool_core::Answer;
    let Ok(tty) = std::fs::File::open("/dev/tty") else {
        return Answer::NoPerson("there is no terminal to ask on".to_owned());
    };
    let mut err = std::io::stderr().lock();
    // The question comes from the model (or text it read): its control
    // characters are shown escaped, so it cannot drive the terminal.
    let shown = |text: &str| crate::render::escape_controls(text);
    let _ = writeln!(err, "The agent asks: {}", shown(&question.question));
    for (n, choice) in question.choices.iter().enumerate() {
        let _ = writeln!(err, "  {}) {}", n + 1, shown(choice));
    }
    let hint = match &question.default {
        Some(d) => format!(" [{}]", shown(d)),
        None => String::new(),
    };
    let _ = write!(err, "Your answer{hint}: ");
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match BufReader::new(std::io::Read::take(tty, MAX_ANSWER)).read_line(&mut line) {
        Ok(0) => Answer::Declined("the terminal closed before an answer".to_owned()),
        Ok(_) => {
            let text = line.trim();
            let picked = text
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|n| question.choices.get(n));
            Answer::Answered(picked.map_or_else(|| text.to_owned(), Clone::clone))
        }
        Err(e) => Answer::NoPerson(format!("the terminal could not be read: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Review 24, finding 10: the person sees the defaults the call runs
    /// with, not only the model's arguments.
    #[test]
    fn the_prompt_shows_the_defaults_the_call_runs_with() {
        let object = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
        let request = ApprovalRequest {
            tool: "place_order".to_owned(),
            kind: tool_core::ToolKind::Write,
            display: Default::default(),
            arguments: object(json!({"sku": "MUG-1"})),
            editable_params: Vec::new(),
            trace_id: None,
            injected: object(json!({"uid": "u-42"})),
            editable_schemas: serde_json::Map::new(),
            defaults: object(json!({"quantity": 1, "note": "x".repeat(120)})),
        };
        assert_eq!(
            prompt_text(&request),
            format!(
                "`place_order` (write) needs your confirmation.\n  arguments: {{\"sku\":\"MUG-1\"}}\n  \
                 supplied by the application: {{\"uid\":\"u-42\"}}\n  quantity: 1 (default)\n  \
                 note: \"{}… (default)\nRun it? [y/N] ",
                "x".repeat(99)
            )
        );
    }
}
