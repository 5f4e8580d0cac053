//! Ctrl-C during `tool call` (review 26, F2): the call is cancelled first,
//! so that what it started elsewhere is told (an imported MCP tool's
//! server gets `notifications/cancelled`, or `tasks/cancel` for a task),
//! then the program ends with status 130 as the default action would.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// Whether [`block_on`] runs a call (and so handles Ctrl-C itself).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether the y/N confirmation question (`approve`) is on the terminal,
/// waiting for its answer: Ctrl-C then ends its line first.
pub(crate) static PROMPTING: AtomicBool = AtomicBool::new(false);

/// Ends the y/N question's line when the question is on the terminal
/// (once, whoever handles Ctrl-C first), so the shell's prompt does not
/// land after `[y/N] `.
pub(crate) fn end_question_line() {
    if PROMPTING.swap(false, Ordering::SeqCst) {
        let mut err = std::io::stderr().lock();
        let _ = std::io::Write::write_all(&mut err, b"\n");
        let _ = std::io::Write::flush(&mut err);
    }
}

/// Whether a call runs under [`block_on`]: Ctrl-C is then its to handle.
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Clears [`ACTIVE`] when the call ends.
struct Active;

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
    }
}

/// The longest the program takes after Ctrl-C before it exits: 2 s for the
/// cancelled call to end and its cancellations to be sent. A second Ctrl-C
/// exits at once.
pub(crate) const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// Runs `call` on `runtime`. A `SIGINT` while it runs cancels `cancel`
/// (the call's token), waits at most [`INTERRUPT_GRACE`] for the call to
/// end and for the cancellations of the MCP calls it dropped to be sent
/// ([`tool_mcp::settle_cancellations`]), and exits with status 130. Without
/// the runtime's signal driver the default action stays (the program ends
/// at once).
pub(crate) fn block_on<F: Future>(
    runtime: &tokio::runtime::Runtime,
    cancel: &CancellationToken,
    call: F,
) -> F::Output {
    runtime.block_on(async {
        let Ok(mut interrupts) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        else {
            return call.await;
        };
        ACTIVE.store(true, Ordering::SeqCst);
        let _active = Active;
        tokio::pin!(call);
        tokio::select! {
            biased;
            output = &mut call => output,
            _ = interrupts.recv() => {
                // A y/N question on the terminal gets its line ended first.
                end_question_line();
                cancel.cancel();
                let tidy = async {
                    let _ = (&mut call).await;
                    tool_mcp::settle_cancellations(INTERRUPT_GRACE).await;
                };
                tokio::select! {
                    _ = tokio::time::timeout(INTERRUPT_GRACE, tidy) => {}
                    _ = interrupts.recv() => {}
                }
                std::process::exit(130);
            }
        }
    })
}
