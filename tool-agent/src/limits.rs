//! [`AgentLimits`]: the limits of one agent run, held by [`Agent`](crate::Agent)
//! and by [`SubAgents`](crate::subagent::SubAgents) (for each sub-agent it
//! starts), and the four builder setters both offer over it, written once
//! ([`limit_setters!`]).

use std::time::Duration;

use crate::message::ToolChoice;

/// Default [`Agent::max_turns`](crate::Agent::max_turns) ([`AgentLimits::max_turns`]).
pub const DEFAULT_MAX_TURNS: u32 = 32;

/// The limits of one agent run.
///
/// ```
/// use std::time::Duration;
/// use tool_agent::{Agent, AgentLimits, ScriptedClient};
/// use tool_core::ToolRegistry;
///
/// let limits = AgentLimits { max_turns: 4, time_limit: Some(Duration::from_secs(60)), ..AgentLimits::default() };
/// let agent = Agent::new(ScriptedClient::new([]), ToolRegistry::new()).limits(limits.clone());
/// assert_eq!(agent.current_limits(), &limits);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AgentLimits {
    /// Most model requests per run (at least 1; 0 is read as 1). Default
    /// [`DEFAULT_MAX_TURNS`] for an [`Agent`](crate::Agent), 16 for
    /// each sub-agent of [`SubAgents`](crate::subagent::SubAgents).
    pub max_turns: u32,
    /// Wall time after which a run stops (checked while waiting for the model
    /// and between turns). Default none.
    pub time_limit: Option<Duration>,
    /// Most generated tokens per answer (`max_tokens` / `max_output_tokens`).
    /// Default none (the provider's).
    pub max_output_tokens: Option<u32>,
    /// The tool choice of the first turn only (e.g. a forced tool for a small
    /// local model); later turns use the agent's tool choice. Default none.
    pub first_tool_choice: Option<ToolChoice>,
}

impl Default for AgentLimits {
    fn default() -> Self {
        Self {
            max_turns: DEFAULT_MAX_TURNS,
            time_limit: None,
            max_output_tokens: None,
            first_tool_choice: None,
        }
    }
}

/// The builder setters over a `limits: AgentLimits` field, for the impl
/// blocks of [`Agent`](crate::Agent) and [`SubAgents`](crate::subagent::SubAgents).
macro_rules! limit_setters {
    () => {
        /// Sets every limit at once ([`AgentLimits`](crate::AgentLimits));
        /// `max_turns` 0 is read as 1.
        #[must_use]
        pub fn limits(mut self, limits: $crate::limits::AgentLimits) -> Self {
            self.limits = $crate::limits::AgentLimits {
                max_turns: limits.max_turns.max(1),
                ..limits
            };
            self
        }

        /// The limits set so far.
        pub fn current_limits(&self) -> &$crate::limits::AgentLimits {
            &self.limits
        }

        /// Most model requests per run (at least 1): [`AgentLimits::max_turns`](crate::AgentLimits::max_turns).
        #[must_use]
        pub fn max_turns(mut self, n: u32) -> Self {
            self.limits.max_turns = n.max(1);
            self
        }

        /// Stops a run after `limit` of wall time (checked while waiting for the
        /// model and between turns): [`AgentLimits::time_limit`](crate::AgentLimits::time_limit).
        #[must_use]
        pub fn time_limit(mut self, limit: std::time::Duration) -> Self {
            self.limits.time_limit = Some(limit);
            self
        }

        /// Caps each answer's generated tokens:
        /// [`AgentLimits::max_output_tokens`](crate::AgentLimits::max_output_tokens).
        #[must_use]
        pub fn max_output_tokens(mut self, n: u32) -> Self {
            self.limits.max_output_tokens = Some(n);
            self
        }

        /// The tool choice of the first turn only:
        /// [`AgentLimits::first_tool_choice`](crate::AgentLimits::first_tool_choice).
        #[must_use]
        pub fn first_tool_choice(mut self, choice: $crate::message::ToolChoice) -> Self {
            self.limits.first_tool_choice = Some(choice);
            self
        }
    };
}

pub(crate) use limit_setters;
