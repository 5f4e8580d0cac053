//! The autoref tiers through which the generated shim reaches parameter,
//! context, output and error types: `#[tool]` calls the methods on `&Wrap<T>`
//! (or `&&Wrap<E>`), and method resolution picks the bounded impl when the
//! type meets the bounds, else an unbounded fallback, so a type error is
//! reported once, by the spanned assertion in `private.rs`, never again inside
//! the shim.

use std::fmt::Display;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::result::{ErrorKind, ToolError, ToolResult};
use crate::tool::context::ToolContext;
use crate::tool::extract::FromToolContext;
use crate::tool::statics::Invocation;

/// Carries a type to the access traits below. `#[tool]` calls their methods
/// on `&Wrap<T>`: the bounded impl (on `Wrap<T>`) wins by autoref when `T`
/// meets the bounds; otherwise the unbounded fallback (on `&Wrap<T>`) is
/// picked, so a type error is reported once, by the spanned assertion,
/// instead of again inside the generated shim.
pub struct Wrap<T>(pub PhantomData<T>);

impl<T> Wrap<T> {
    /// The wrapper.
    pub const NEW: Self = Self(PhantomData);
}

/// Argument extraction and schema for a parameter type that meets the bounds.
pub trait ArgAccess<T> {
    /// See [`Invocation::value`].
    fn __value(&self, inv: &mut Invocation, idx: usize) -> Result<Option<T>, ToolResult>;
    /// See [`Invocation::required`].
    fn __required(&self, inv: &mut Invocation, idx: usize) -> Result<T, ToolResult>;
    /// The type's schema.
    fn __schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
    /// See [`Invocation::flattened`].
    fn __flattened(&self, inv: &mut Invocation, idx: usize) -> Result<T, ToolResult>;
    /// The type's own schema, inline (for `#[arg(flatten)]`: an object
    /// schema whose properties become top-level parameters).
    fn __flat_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T: DeserializeOwned + schemars::JsonSchema> ArgAccess<T> for Wrap<T> {
    fn __flattened(&self, inv: &mut Invocation, idx: usize) -> Result<T, ToolResult> {
        inv.flattened::<T>(idx)
    }
    fn __flat_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
    fn __value(&self, inv: &mut Invocation, idx: usize) -> Result<Option<T>, ToolResult> {
        inv.value::<T>(idx)
    }
    fn __required(&self, inv: &mut Invocation, idx: usize) -> Result<T, ToolResult> {
        inv.required::<T>(idx)
    }
    fn __schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<T>()
    }
}

/// Picked only when `T` lacks a bound, i.e. when `assert_tool_param` already failed.
pub trait ArgAccessFallback<T> {
    /// Never reached in a program that compiles.
    fn __value(&self, inv: &mut Invocation, idx: usize) -> Result<Option<T>, ToolResult>;
    /// Never reached in a program that compiles.
    fn __required(&self, inv: &mut Invocation, idx: usize) -> Result<T, ToolResult>;
    /// Never reached in a program that compiles.
    fn __schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
    /// Never reached in a program that compiles.
    fn __flattened(&self, inv: &mut Invocation, idx: usize) -> Result<T, ToolResult>;
    /// Never reached in a program that compiles.
    fn __flat_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T> ArgAccessFallback<T> for &Wrap<T> {
    fn __flattened(&self, _: &mut Invocation, _: usize) -> Result<T, ToolResult> {
        Err(ToolResult::default())
    }
    fn __flat_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<()>()
    }
    fn __value(&self, _: &mut Invocation, _: usize) -> Result<Option<T>, ToolResult> {
        Err(ToolResult::default())
    }
    fn __required(&self, _: &mut Invocation, _: usize) -> Result<T, ToolResult> {
        Err(ToolResult::default())
    }
    fn __schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<()>()
    }
}

/// Extraction of a framework-filled parameter whose type implements [`FromToolContext`].
pub trait ExtractAccess<'a, T> {
    /// See [`FromToolContext::from_tool_context`].
    fn __extract(&self, ctx: &'a ToolContext) -> Result<T, ToolError>;
}

impl<'a, T: FromToolContext<'a>> ExtractAccess<'a, T> for Wrap<T> {
    fn __extract(&self, ctx: &'a ToolContext) -> Result<T, ToolError> {
        T::from_tool_context(ctx)
    }
}

/// Picked only when `T` is not [`FromToolContext`], i.e. when
/// `assert_from_tool_context` already failed.
pub trait ExtractAccessFallback<'a, T> {
    /// Never reached in a program that compiles.
    fn __extract(&self, ctx: &'a ToolContext) -> Result<T, ToolError>;
}

impl<'a, T> ExtractAccessFallback<'a, T> for &Wrap<T> {
    fn __extract(&self, _: &'a ToolContext) -> Result<T, ToolError> {
        Err(ToolError::new(ErrorKind::Failed, "not an extractor"))
    }
}

/// The schema of a returned structured type that implements `JsonSchema`.
pub trait OutputAccess {
    /// The type's schema (with its definitions in `generator`).
    fn __output_schema(
        &self,
        generator: &mut schemars::SchemaGenerator,
    ) -> Option<schemars::Schema>;
}

impl<T: schemars::JsonSchema> OutputAccess for Wrap<T> {
    fn __output_schema(
        &self,
        generator: &mut schemars::SchemaGenerator,
    ) -> Option<schemars::Schema> {
        Some(generator.subschema_for::<T>())
    }
}

/// Picked when the returned type has no `JsonSchema`: no output schema.
pub trait OutputAccessFallback {
    /// Always `None`.
    fn __output_schema(
        &self,
        generator: &mut schemars::SchemaGenerator,
    ) -> Option<schemars::Schema>;
}

impl<T> OutputAccessFallback for &Wrap<T> {
    fn __output_schema(&self, _: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
}

/// A `Result`'s error that converts into a [`ToolError`]: the kind is kept.
///
/// The three `ErrAccess*` traits are autoref levels: `#[tool]` calls
/// `(&&wrap).__error(e)`, which picks this impl (on `&Wrap<E>`) when `E:
/// Into<ToolError>`, else [`ErrAccess`] (on `&&Wrap<E>`) when `E: Display`,
/// else the fallback (on `Wrap<E>`).
pub trait ErrAccessKind<E> {
    /// The error result, of the error's own kind.
    fn __error(&self, error: E) -> ToolResult;
}

impl<E: Into<ToolError>> ErrAccessKind<E> for &Wrap<E> {
    fn __error(&self, error: E) -> ToolResult {
        ToolResult::from(error.into())
    }
}

/// A `Result`'s error that is only `Display`: kind `failed`, its text the message.
pub trait ErrAccess<E> {
    /// The error result.
    fn __error(&self, error: E) -> ToolResult;
}

impl<E: Display> ErrAccess<E> for &&Wrap<E> {
    fn __error(&self, error: E) -> ToolResult {
        ToolResult::failed(error.to_string())
    }
}

/// Picked only when `E` is not `Display`, i.e. when `assert_error_display` already failed.
pub trait ErrAccessFallback<E> {
    /// Never reached in a program that compiles.
    fn __error(&self, error: E) -> ToolResult;
}

impl<E> ErrAccessFallback<E> for Wrap<E> {
    fn __error(&self, error: E) -> ToolResult {
        drop(error);
        ToolResult::default()
    }
}
