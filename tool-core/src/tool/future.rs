//! [`BoxFuture`]: the boxed future that the extension traits ([`ToolHandler`](crate::ToolHandler),
//! [`Approver`](crate::Approver)) return. A leaf, so both can name it without importing each other.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
