//! [`IntoToolResult`]: what a tool fn may return, and how it becomes a
//! [`ToolResult`]; [`run_blocking`]: blocking work off the async runtime,
//! with a panic inside it contained as an error.

use std::borrow::Cow;

use crate::result::{ErrorKind, ToolError, ToolResult};

/// Converts what a tool returned into a [`ToolResult`].
///
/// Implemented for `ToolResult`, [`ToolError`] (a failed result of its
/// kind), `String`, `&str`, `Cow<str>`, `()` (empty output) and `Result<T, E>`
/// with `T: IntoToolResult` and `E: Into<ToolError>`, so an error keeps its
/// [`ErrorKind`]. Implement it (or `From<YourError> for ToolError`) to return
/// your own types; `?` then works inside a tool that returns
/// `Result<ToolResult, ToolError>`.
///
/// `#[tool]` fns may return more than this trait covers: any `Serialize` type
/// (its JSON, with the value in `metadata["structured"]`), and a `Result`
/// whose error only implements `Display` (`anyhow::Error`, `std::io::Error`,
/// a `Box<dyn Error>`): that error becomes kind `failed` with its `Display`
/// text as the message. An error type that implements both `Display` and
/// `Into<ToolError>` keeps its kind.
///
/// ```
/// use tool_core::{ErrorKind, IntoToolResult, ToolError, ToolResult};
///
/// enum LookupError {
///     NotFound(String),
///     Offline,
/// }
///
/// impl From<LookupError> for ToolError {
///     fn from(e: LookupError) -> Self {
///         match e {
///             LookupError::NotFound(key) => {
///                 ToolError::new(ErrorKind::InvalidArguments, format!("no entry `{key}`; list the entries first"))
///             }
///             LookupError::Offline => ToolError::new(ErrorKind::Failed, "the directory is offline; try again later"),
///         }
///     }
/// }
///
/// fn lookup(key: &str) -> Result<String, LookupError> {
///     match key {
///         "ada" => Ok("Ada Lovelace".to_owned()),
///         "" => Err(LookupError::Offline),
///         other => Err(LookupError::NotFound(other.to_owned())),
///     }
/// }
///
/// // `?` converts through `From`; the kind survives into the result.
/// fn tool_body(key: &str) -> Result<ToolResult, ToolError> {
///     let name = lookup(key)?;
///     Ok(ToolResult::ok(name))
/// }
///
/// assert_eq!(tool_body("ada").into_tool_result().output, "Ada Lovelace");
/// let missing = tool_body("bob").into_tool_result();
/// assert_eq!(missing.error.unwrap().kind, ErrorKind::InvalidArguments);
/// let offline = lookup("").into_tool_result();
/// assert_eq!(offline.error.unwrap().kind, ErrorKind::Failed);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "return `ToolResult`, `String`, `&str`, `()`, a `Serialize` type, or `Result` of one of these",
    note = "the error type of a `Result` must implement `Display` (its kind is kept when it also implements `Into<ToolError>`)"
)]
pub trait IntoToolResult {
    /// The conversion.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for ToolError {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::ok(self)
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::ok(self)
    }
}

impl IntoToolResult for Cow<'_, str> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::ok(self.into_owned())
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::ok("")
    }
}

impl<T: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => ToolResult::from(e.into()),
        }
    }
}

impl From<ToolError> for ToolResult {
    /// A failed result carrying `error` (no output).
    fn from(error: ToolError) -> Self {
        Self {
            error: Some(error),
            ..Self::default()
        }
    }
}

impl From<String> for ToolError {
    /// An error of kind [`ErrorKind::Failed`] with `message`.
    fn from(message: String) -> Self {
        Self::new(ErrorKind::Failed, message)
    }
}

impl From<&str> for ToolError {
    /// An error of kind [`ErrorKind::Failed`] with `message`.
    fn from(message: &str) -> Self {
        Self::new(ErrorKind::Failed, message)
    }
}

/// The message the model reads when blocking work panicked: no payload, which
/// may hold anything (paths, values, a secret), and advice not to retry.
const BLOCKING_PANICKED: &str = "The tool stopped with an internal error and returned no result. Do not retry the same call; try another approach.";

/// Runs blocking work (file I/O, a CPU-bound step) on Tokio's blocking pool
/// and waits for it, for tools that must not block the async runtime.
///
/// A panic inside `f` is contained: it becomes a [`ToolError`] of kind
/// [`ErrorKind::Panicked`] whose message says the tool stopped with an
/// internal error, never the panic's own text (the panic hook has already
/// reported that to the operator on stderr); the event is logged to
/// `tracing` (target `tool_core`). If the runtime shuts down before `f`
/// runs, the error is [`ErrorKind::Cancelled`].
///
/// Must be called inside a Tokio runtime.
///
/// ```
/// use tool_core::{ErrorKind, run_blocking};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let n = run_blocking(|| 6 * 7).await.unwrap();
/// assert_eq!(n, 42);
///
/// let crashed = run_blocking(|| -> u32 { panic!("token sk-live-123 rejected") }).await.unwrap_err();
/// assert_eq!(crashed.kind, ErrorKind::Panicked);
/// assert!(!crashed.message.contains("sk-live-123"));
/// # });
/// ```
///
/// # Errors
/// [`ErrorKind::Panicked`] when `f` panicked; [`ErrorKind::Cancelled`] when
/// the blocking task was cancelled.
pub async fn run_blocking<F, T>(f: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(value) => Ok(value),
        Err(e) if e.is_panic() => {
            tracing::error!(target: "tool_core", "blocking work panicked; the panic was contained");
            Err(ToolError::new(ErrorKind::Panicked, BLOCKING_PANICKED))
        }
        Err(_) => Err(ToolError::new(
            ErrorKind::Cancelled,
            "The tool's work was cancelled before it finished (the application is shutting down).",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_error_kind() {
        let denied: Result<String, ToolError> = Err(ToolError::new(ErrorKind::Denied, "no"));
        let r = denied.into_tool_result();
        assert_eq!(r.error.as_ref().map(|e| e.kind), Some(ErrorKind::Denied));
        assert_eq!(r.output, "");
        let text: Result<(), String> = Err("plain".to_owned());
        let r = text.into_tool_result();
        assert_eq!(
            r.error,
            Some(ToolError::new(ErrorKind::Failed, "plain")),
            "a String error is `failed`"
        );
        let ok: Result<&str, ToolError> = Ok("fine");
        assert_eq!(ok.into_tool_result().output, "fine");
    }

    #[tokio::test]
    async fn run_blocking_contains_a_panic_without_its_payload() {
        let e = run_blocking(|| -> u8 { panic!("secret payload 0xdeadbeef") })
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Panicked);
        assert_eq!(e.message, BLOCKING_PANICKED);
        assert_eq!(run_blocking(|| "done").await, Ok("done"));
    }
}
