//! Integration tests of the `tool` program, run as `tool-fixtures` (the same
//! program with test tools, built with the `fixtures` feature through this
//! package's dev-dependency on itself): one test binary, one module per
//! command.

mod app_mode;
mod batch;
mod call;
mod concurrency;
mod diagnostics;
mod examples;
mod goal;
mod index;
mod jobs;
mod ledger;
mod limits;
mod list;
mod load;
mod mcp;
mod mcp_import;
mod mcp_oauth;
mod mcp_sessions;
mod options;
mod out;
mod parse;
mod scale;
mod schema;
mod skill_md;
mod skill_prompts;
mod skills;
#[cfg(feature = "redis")]
mod state_redis;
mod support;
mod todo;
mod views;
mod web;
