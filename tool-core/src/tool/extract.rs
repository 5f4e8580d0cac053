//! [`FromToolContext`]: the values the framework hands to tool parameters.
//!
//! A `#[tool]` parameter is filled by the framework instead of the model when
//! its type implements [`FromToolContext`]. The macro picks such parameters
//! out by their type's last path segment (`ToolContext`, `State`,
//! `CancellationToken`) as a convenience, or by an explicit `#[context]` on
//! the parameter (for a type alias such as `type Ctx = ToolContext;`, or a
//! type of your own that implements the trait), and then asserts the trait
//! at the parameter, so a look-alike such as axum's `State<T>` fails to
//! compile there with a message saying what to do, instead of being taken for
//! `tool_core::State`.

use tokio_util::sync::CancellationToken;

use crate::result::{ErrorKind, ToolError};
use crate::tool::context::{State, ToolContext};

/// A value a tool parameter receives from the call's [`ToolContext`] rather
/// than from the model's arguments.
///
/// Implemented by `&ToolContext`, `ToolContext` (a clone), `Option<&ToolContext>`
/// (always `Some`), [`State<T>`] (typed application state, added with
/// [`ToolContext::with_state`]) and [`CancellationToken`] (the call's token,
/// cancelled on timeout or when the host cancels). Implement it for a type of
/// your own to have it handed to tools that name it with `#[context]`.
///
/// ```
/// use tool_core::{FromToolContext, ToolContext, ToolError, ErrorKind, tool};
///
/// /// The caller's user id, from the context value `uid`.
/// struct UserId(String);
///
/// impl<'a> FromToolContext<'a> for UserId {
///     fn from_tool_context(ctx: &'a ToolContext) -> Result<Self, ToolError> {
///         ctx.uid()
///             .map(|uid| UserId(uid.to_owned()))
///             .ok_or_else(|| ToolError::new(ErrorKind::MissingContext, "the context has no `uid`"))
///     }
/// }
///
/// /// Greet the caller.
/// #[tool]
/// fn greet(#[context] user: UserId) -> String {
///     format!("hello {}", user.0)
/// }
/// # let r = tokio::runtime::Runtime::new().unwrap();
/// # let registry = tool_core::ToolRegistry::global();
/// # let out = r.block_on(registry.execute("greet", "{}", &ToolContext::new().with_uid("ann")));
/// # assert_eq!(out.output, "hello ann");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value the framework can hand to a tool",
    label = "this parameter is filled from the call's context, so its type must implement `tool_core::FromToolContext`",
    note = "the framework hands out `&ToolContext`, `ToolContext`, `Option<&ToolContext>`, `tool_core::State<T>` and `tool_core::CancellationToken`",
    note = "another crate's `State` (axum's, say) is not `tool_core::State`: import `tool_core::State`, or implement `FromToolContext` for your type"
)]
pub trait FromToolContext<'a>: Sized {
    /// Takes the value out of the context.
    ///
    /// # Errors
    /// A [`ToolError`] saying what the context lacks (kind `missing_context`
    /// for absent state); the call fails with it, the framework adding the
    /// tool's and the parameter's names.
    fn from_tool_context(ctx: &'a ToolContext) -> Result<Self, ToolError>;
}

impl<'a> FromToolContext<'a> for &'a ToolContext {
    fn from_tool_context(ctx: &'a ToolContext) -> Result<Self, ToolError> {
        Ok(ctx)
    }
}

impl FromToolContext<'_> for ToolContext {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        Ok(ctx.clone())
    }
}

impl<'a> FromToolContext<'a> for Option<&'a ToolContext> {
    fn from_tool_context(ctx: &'a ToolContext) -> Result<Self, ToolError> {
        Ok(Some(ctx))
    }
}

impl<T: Send + Sync + 'static> FromToolContext<'_> for State<T> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        ctx.state::<T>().ok_or_else(|| {
            ToolError::new(
                ErrorKind::MissingContext,
                format!(
                    "it needs application state of type `{}`, but the context holds none (add it with ToolContext::with_state)",
                    std::any::type_name::<T>()
                ),
            )
        })
    }
}

impl FromToolContext<'_> for CancellationToken {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        Ok(ctx.cancellation_token().clone())
    }
}
