//! [`ToolFlags`]: the boolean options of a tool, declared once from the
//! attribute (`#[tool(read_only, ...)]`) to the spec (`ToolSpec::flags`).

/// The seven boolean options of a tool, all `false` unless set.
///
/// The same struct is what `#[tool(read_only, destructive, ...)]` parses into,
/// what the generated code emits as one literal, and what `ToolSpec` holds.
/// Buildable in a `const` ([`ToolFlags::NONE`] and the `with_*` fns are `const`).
///
/// The names are the attribute keys and the JSON field names; the MCP
/// annotations they map to are given on each field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ToolFlags {
    /// The tool does not change anything (MCP `readOnlyHint`).
    pub read_only: bool,
    /// The tool may destroy data (MCP `destructiveHint`).
    pub destructive: bool,
    /// Repeating a call with the same arguments has no further effect (MCP `idempotentHint`).
    pub idempotent: bool,
    /// The tool reaches an open world: the web, other people (MCP `openWorldHint`).
    pub open_world: bool,
    /// Calls may run concurrently with other calls.
    pub concurrency_safe: bool,
    /// A person must approve each call.
    pub requires_confirmation: bool,
    /// Ask providers for strict schema adherence (OpenAI `strict: true`).
    pub strict: bool,
}

impl ToolFlags {
    /// Every flag `false`.
    pub const NONE: Self = Self {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
        concurrency_safe: false,
        requires_confirmation: false,
        strict: false,
    };

    /// The attribute keys, in declaration order.
    pub const NAMES: [&'static str; 7] = [
        "read_only",
        "destructive",
        "idempotent",
        "open_world",
        "concurrency_safe",
        "requires_confirmation",
        "strict",
    ];

    /// Sets the flag called `name` (one of [`NAMES`](Self::NAMES)); `false`
    /// when there is no flag of that name (nothing changes then).
    pub fn set(&mut self, name: &str, value: bool) -> bool {
        let slot = match name {
            "read_only" => &mut self.read_only,
            "destructive" => &mut self.destructive,
            "idempotent" => &mut self.idempotent,
            "open_world" => &mut self.open_world,
            "concurrency_safe" => &mut self.concurrency_safe,
            "requires_confirmation" => &mut self.requires_confirmation,
            "strict" => &mut self.strict,
            _ => return false,
        };
        *slot = value;
        true
    }

    /// Each flag set in either.
    #[must_use]
    pub const fn union(self, other: Self) -> Self {
        Self {
            read_only: self.read_only || other.read_only,
            destructive: self.destructive || other.destructive,
            idempotent: self.idempotent || other.idempotent,
            open_world: self.open_world || other.open_world,
            concurrency_safe: self.concurrency_safe || other.concurrency_safe,
            requires_confirmation: self.requires_confirmation || other.requires_confirmation,
            strict: self.strict || other.strict,
        }
    }

    /// With `read_only` set to `value`.
    #[must_use]
    pub const fn with_read_only(mut self, value: bool) -> Self {
        self.read_only = value;
        self
    }

    /// With `destructive` set to `value`.
    #[must_use]
    pub const fn with_destructive(mut self, value: bool) -> Self {
        self.destructive = value;
        self
    }

    /// With `idempotent` set to `value`.
    #[must_use]
    pub const fn with_idempotent(mut self, value: bool) -> Self {
        self.idempotent = value;
        self
    }

    /// With `open_world` set to `value`.
    #[must_use]
    pub const fn with_open_world(mut self, value: bool) -> Self {
        self.open_world = value;
        self
    }

    /// With `concurrency_safe` set to `value`.
    #[must_use]
    pub const fn with_concurrency_safe(mut self, value: bool) -> Self {
        self.concurrency_safe = value;
        self
    }

    /// With `requires_confirmation` set to `value`.
    #[must_use]
    pub const fn with_requires_confirmation(mut self, value: bool) -> Self {
        self.requires_confirmation = value;
        self
    }

    /// With `strict` set to `value`.
    #[must_use]
    pub const fn with_strict(mut self, value: bool) -> Self {
        self.strict = value;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_sets_its_own_flag() {
        for (i, name) in ToolFlags::NAMES.iter().enumerate() {
            let mut flags = ToolFlags::NONE;
            assert!(flags.set(name, true));
            let set = [
                flags.read_only,
                flags.destructive,
                flags.idempotent,
                flags.open_world,
                flags.concurrency_safe,
                flags.requires_confirmation,
                flags.strict,
            ];
            let expected: Vec<bool> = (0..7).map(|j| j == i).collect();
            assert_eq!(set.to_vec(), expected, "{name}");
        }
        let mut none = ToolFlags::NONE;
        assert!(!none.set("readonly", true));
        assert_eq!(none, ToolFlags::NONE);
        assert_eq!(
            ToolFlags::NONE
                .with_strict(true)
                .union(ToolFlags::NONE.with_read_only(true)),
            ToolFlags::NONE.with_strict(true).with_read_only(true)
        );
    }
}
