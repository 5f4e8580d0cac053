//! [`Toolset`]: tools defined as methods of a value, bound to an instance.
//!
//! `#[toolset]` on an `impl` block turns each of its `#[tool]` methods
//! (taking `&self` or `self: Arc<Self>`, sync or async, with every option a
//! free `#[tool]` fn has) into a tool, and implements [`Toolset`] for the
//! type: [`Toolset::tools`] returns the tools bound to one instance, and
//! [`ToolRegistry::add_toolset`] registers them all. Instance tools are not in
//! the global registry ([`ToolRegistry::global`]) nor in
//! [`ToolRegistry::of_crate`]: they need an instance, which only the host has.
//! Two instances of one toolset in one registry collide by name like any two
//! tools ([`ToolRegistry::register_with`] and [`Tool::renamed`] resolve it).
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use tool_core::{ToolContext, ToolRegistry, toolset};
//!
//! struct Counter(Mutex<u64>);
//!
//! #[toolset]
//! impl Counter {
//!     /// Add one and return the new count.
//!     #[tool]
//!     fn bump(&self) -> String {
//!         let mut n = self.0.lock().unwrap();
//!         *n += 1;
//!         n.to_string()
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut registry = ToolRegistry::new();
//! registry.add_toolset(Arc::new(Counter(Mutex::new(41))))?;
//! let out = registry.execute("bump", "{}", &ToolContext::new()).await;
//! assert_eq!(out.output, "42");
//! # Ok::<(), tool_core::RegistryError>(())
//! # }).unwrap();
//! ```

use std::any::Any;
use std::sync::Arc;

use crate::registry::ToolRegistry;
use crate::registry::error::RegistryError;
use crate::tool::Tool;
use crate::tool::statics::StaticTool;

/// A type whose `#[tool]` methods (an impl block marked `#[toolset]`) are
/// tools bound to an instance. Implemented by `#[toolset]`; implementing it
/// by hand is possible but rarely useful.
pub trait Toolset: Send + Sync + 'static {
    /// The tools of this toolset, each bound to `self`, in declaration order.
    ///
    /// # Errors
    /// [`RegistryError::InvalidSpec`] when a spec built from the methods is
    /// invalid (the macro checks what it can at compile time).
    fn tools(self: Arc<Self>) -> Result<Vec<Tool>, RegistryError>;
}

impl ToolRegistry {
    /// Registers every tool of `toolset`, bound to that instance.
    ///
    /// # Errors
    /// As [`register`](Self::register) for each tool ([`RegistryError::Duplicate`]
    /// when a name is taken, for instance by another instance of the same
    /// toolset), or the error of [`Toolset::tools`]; every problem is
    /// reported ([`RegistryError::Many`]) and the tools without one are added.
    pub fn add_toolset<T: Toolset>(&mut self, toolset: Arc<T>) -> Result<(), RegistryError> {
        let mut errors = Vec::new();
        for tool in toolset.tools()? {
            if let Err(e) = self.register(tool) {
                errors.push(e);
            }
        }
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(RegistryError::Many(errors)),
        }
    }
}

/// The tools of `defs`, each bound to `receiver` (generated code only).
///
/// # Errors
/// As [`Toolset::tools`].
pub fn bound_tools(
    receiver: &Arc<dyn Any + Send + Sync>,
    defs: &[&'static StaticTool],
) -> Result<Vec<Tool>, RegistryError> {
    let mut tools = Vec::with_capacity(defs.len());
    let mut errors = Vec::new();
    for def in defs {
        match Tool::from_static_bound(def, Arc::clone(receiver)) {
            Ok(tool) => tools.push(tool),
            Err(e) => errors.push(e),
        }
    }
    RegistryError::from_all(errors).map(|()| tools)
}
