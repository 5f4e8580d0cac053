//! Built-in coding tools for agents, confined to a workspace. (Arrives with the built-in tools issue.)
